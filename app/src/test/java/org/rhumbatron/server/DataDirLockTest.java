package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.app.Main;

/**
 * One core per data directory: a second lock of a held directory is refused with one line naming
 * the directory and the holder's pid; once the holder let go, or was killed, the next one takes the
 * directory.
 */
class DataDirLockTest {
  @TempDir Path dir;

  private String pidInFile() throws Exception {
    return Files.readString(dir.resolve(DataDirLock.FILE_NAME)).trim();
  }

  @Test
  void aSecondLockIsRefusedNamingTheDirectoryAndPidAndTakesItOnceTheFirstLetGo() throws Exception {
    String pid = Long.toString(ProcessHandle.current().pid());
    DataDirLock first = DataDirLock.acquire(dir);
    assertThat(pidInFile()).isEqualTo(pid);
    assertThatThrownBy(() -> DataDirLock.acquire(dir))
        .isInstanceOf(DataDirLock.InUseException.class)
        .hasMessage(
            "data directory "
                + dir.toAbsolutePath().normalize()
                + " is in use by another core (pid "
                + pid
                + "): stop that core or give another --data");
    first.close();
    try (DataDirLock second = DataDirLock.acquire(dir)) {
      assertThat(pidInFile()).isEqualTo(pid);
    }
  }

  /** The one line {@code rhumbatron ARGS} prints on stderr; its exit code is 2. */
  private static String refusal(String... args) {
    StringWriter err = new StringWriter();
    int code = Main.run(Map.of(), new PrintWriter(new StringWriter()), new PrintWriter(err), args);
    assertThat(code).as(err.toString()).isEqualTo(2);
    return err.toString().strip();
  }

  @Test
  void coreAndDemoOnADirectoryInUseAreRefusedInOneLineNamingItAndThePid() throws Exception {
    String expected =
        "rhumbatron: data directory "
            + dir.toAbsolutePath().normalize()
            + " is in use by another core (pid "
            + ProcessHandle.current().pid()
            + "): stop that core or give another --data";
    try (DataDirLock held = DataDirLock.acquire(dir)) {
      assertThat(refusal("core", "--data", dir.toString(), "--http", "0")).isEqualTo(expected);
      assertThat(refusal("demo", "--data", dir.toString(), "--changes", "1")).isEqualTo(expected);
    }
    // Nothing of either was started or written there.
    try (var files = Files.list(dir)) {
      assertThat(files.map(f -> f.getFileName().toString())).containsExactly("core.lock");
    }
  }

  /**
   * SQLite is one node. A second core on the same SQLite file, from another data directory, is
   * refused in one line naming the file and the running core (pid, node id), and writes nothing: no
   * database file, no NATS store.
   */
  @Test
  @org.junit.jupiter.api.Timeout(60) // a core that is not refused runs until stopped
  void aSecondCoreOnOneSqliteFileIsRefusedNamingTheFileAndTheRunningCore(@TempDir Path other)
      throws Exception {
    Path database = dir.resolve("shared.db");
    try (DataDirLock held = DataDirLock.sqlite(database, "node-a")) {
      assertThat(
              refusal(
                  "core", "--data", other.toString(), "--db", database.toString(), "--http", "0"))
          .isEqualTo(
              "rhumbatron: SQLite database "
                  + database.toAbsolutePath().normalize()
                  + " is in use by another core (pid "
                  + ProcessHandle.current().pid()
                  + ", node node-a): SQLite runs one core; stop that core, or run several on"
                  + " PostgreSQL");
    }
    assertThat(database).doesNotExist();
    try (var files = Files.list(other)) {
      assertThat(files.map(f -> f.getFileName().toString()))
          .as("nothing but the data directory's own lock")
          .containsExactly("core.lock");
    }
  }

  @Test
  void theLockOfAKilledProcessIsTakenOver() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process holder =
        new ProcessBuilder(
                java,
                "-cp",
                System.getProperty("java.class.path"),
                DataDirLockHolder.class.getName(),
                dir.toString())
            .redirectErrorStream(true)
            .start();
    try {
      BufferedReader out =
          new BufferedReader(
              new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
      String line;
      while ((line = out.readLine()) != null && !line.startsWith("locked ")) {
        // the holder's JVM may log before it holds the lock
      }
      assertThat(line).as("the holder's output").isNotNull();
      assertThat(pidInFile()).isEqualTo(Long.toString(holder.pid()));
      assertThatThrownBy(() -> DataDirLock.acquire(dir))
          .isInstanceOf(DataDirLock.InUseException.class)
          .hasMessageContaining("(pid " + holder.pid() + ")")
          .hasMessageContaining(dir.toAbsolutePath().normalize().toString());
    } finally {
      holder.destroyForcibly(); // SIGKILL: no shutdown hook, the file keeps its pid
      assertThat(holder.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(pidInFile()).isEqualTo(Long.toString(holder.pid()));
    try (DataDirLock taken = DataDirLock.acquire(dir)) {
      assertThat(pidInFile()).isEqualTo(Long.toString(ProcessHandle.current().pid()));
    }
  }
}
