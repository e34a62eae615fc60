package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.rhumbatron.app.CoreProcess;

/**
 * Core as a child process twice on one NATS, data directory, database and config: the kill tests
 * start the first, kill it, then start the second. Each core's output is kept and printed when the
 * test fails; a core still alive at the end is killed.
 */
final class CoreTwice {
  /** The test's steps, given the two cores. */
  interface Body<T> {
    T run(CoreTwice cores) throws Exception;
  }

  private final String[] args;
  final List<String> firstLines = new CopyOnWriteArrayList<>();
  final List<String> secondLines = new CopyOnWriteArrayList<>();
  private Process first;
  private Process second;

  private CoreTwice(String natsUrl, Path data, String dbFile, Path config) {
    this.args =
        new String[] {
          "core",
          "--nats",
          natsUrl,
          "--data",
          data.resolve("core").toString(),
          "--db",
          dbFile,
          "--http",
          "0",
          "--config",
          config.toString()
        };
  }

  /** {@code data}'s {@code core.properties}, one line per setting. */
  static Path config(Path data, String... lines) throws IOException {
    Path config = data.resolve("core.properties");
    Files.writeString(config, String.join("\n", lines) + "\n");
    return config;
  }

  /** Runs {@code body}; on a failure prints what both cores printed, under {@code test}'s name. */
  static <T> T run(String test, String natsUrl, Path data, String dbFile, Path config, Body<T> body)
      throws Exception {
    CoreTwice cores = new CoreTwice(natsUrl, data, dbFile, config);
    try {
      return body.run(cores);
    } catch (Throwable t) {
      System.out.println(test + " failed; the first core printed:");
      cores.firstLines.forEach(l -> System.out.println("  1| " + l));
      System.out.println("the second core printed:");
      cores.secondLines.forEach(l -> System.out.println("  2| " + l));
      throw t;
    } finally {
      for (Process p : new Process[] {cores.first, cores.second}) {
        if (p != null && p.isAlive()) {
          p.destroyForcibly();
          p.waitFor(30, TimeUnit.SECONDS);
        }
      }
    }
  }

  Process startFirst() throws IOException {
    first = CoreProcess.launch(args);
    CoreProcess.pump(first, firstLines);
    return first;
  }

  Process startSecond() throws IOException {
    second = CoreProcess.launch(args);
    CoreProcess.pump(second, secondLines);
    return second;
  }

  /** Waits until {@code done} or the first core died, then sees it alive. */
  void awaitFirst(Duration atMost, Callable<Boolean> done) {
    awaitAlive(first, "first", firstLines, atMost, Duration.ofMillis(20), done);
  }

  /** Waits until {@code done} or the second core died, then sees it alive. */
  void awaitSecond(Duration atMost, Callable<Boolean> done) {
    awaitAlive(second, "second", secondLines, atMost, Duration.ofMillis(100), done);
  }

  private static void awaitAlive(
      Process core,
      String which,
      List<String> lines,
      Duration atMost,
      Duration poll,
      Callable<Boolean> done) {
    await().atMost(atMost).pollInterval(poll).until(() -> done.call() || !core.isAlive());
    assertThat(core.isAlive()).as(which + " core, output: %s", lines).isTrue();
  }

  /** SIGKILLs the first core (on Linux) and sees it die of it. */
  void killFirst() throws InterruptedException {
    first.toHandle().destroyForcibly();
    assertThat(first.waitFor(30, TimeUnit.SECONDS)).as("first core died").isTrue();
    assertThat(first.exitValue()).as("killed by SIGKILL").isEqualTo(128 + 9);
  }

  /** SIGTERMs the second core and sees it stop cleanly. */
  void stopSecond() throws InterruptedException {
    second.toHandle().destroy();
    assertThat(second.waitFor(30, TimeUnit.SECONDS)).as("second core stopped").isTrue();
    // Its last lines may still be in the pipe when it exits: the reader thread gets them soon.
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(secondLines).anyMatch(l -> l.contains("core stopped")));
  }

  /** One value read with plain JDBC, on a connection of its own: this process never writes. */
  static String read(String dbFile, String sql, String... args) throws SQLException {
    try (java.sql.Connection c = DriverManager.getConnection(dbFile);
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setString(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }
}
