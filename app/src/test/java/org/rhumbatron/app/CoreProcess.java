package org.rhumbatron.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.nats.client.Connection;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.core.ConditionTimeoutException;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.coordinator.outbox.OutboxRowState;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.changes.ChangeCreated;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.JetStreamEventLog;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.platform.queue.JetStreamCommandTransport;
import org.rhumbatron.protocol.EnvelopeCodec;

/** Runs {@code rhumbatron} as a child process on the test classpath, for the tests of core. */
public final class CoreProcess {
  private CoreProcess() {}

  /** {@code java -cp <test classpath> org.rhumbatron.app.Main args...}, stderr into stdout. */
  public static Process launch(String... args) throws IOException {
    return launch(List.of(), args);
  }

  /**
   * As {@link #launch(String...)} through {@code setsid}: the child leads a process group of its
   * own, and a signal to that group is what a terminal's Ctrl-C sends to its foreground job. It
   * starts with SIGINT at its default disposition whatever this JVM inherited: a shell that starts
   * a job in the background ({@code nohup mvn ... &}) ignores SIGINT for it, children inherit an
   * ignored signal, and a JVM that starts with SIGINT ignored never runs its shutdown on Ctrl-C.
   */
  public static Process launchInOwnGroup(String... args) throws IOException {
    return launch(List.of("/usr/bin/env", "--default-signal=INT", "/usr/bin/setsid"), args);
  }

  private static Process launch(List<String> prefix, String... args) throws IOException {
    List<String> command = new ArrayList<>(prefix);
    command.addAll(command(args));
    return new ProcessBuilder(command).redirectErrorStream(true).start();
  }

  /** The command line of {@code rhumbatron args...} on the test classpath. */
  public static List<String> command(String... args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(Main.class.getName());
    command.addAll(List.of(args));
    return command;
  }

  /** A daemon thread that adds each line the process prints to {@code into}, until it ends. */
  public static Thread pump(Process process, List<String> into) {
    Thread t =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(
                      new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                  into.add(line);
                }
              } catch (IOException ignored) {
                // the process ended
              }
            });
    t.setDaemon(true);
    t.start();
    return t;
  }

  /**
   * Creates the Project (with a live app when {@code liveApp}) and the Change as their handlers
   * would, in this process, and waits until their Events are published; then closes all of it, so
   * core is the only writer afterwards.
   */
  public static String createProjectAndChange(
      String natsUrl,
      String project,
      boolean liveApp,
      Settings settings,
      String dbFile,
      WorkGraph graph)
      throws Exception {
    Clock clock = Clock.systemUTC();
    try (Connection connection = JetStreamConnections.connect(natsUrl, "kill-test-setup")) {
      new JetStreamTopology(connection.jetStreamManagement(), settings).ensure();
      try (Database database = Database.open(dbFile);
          Coordinator coordinator =
              Coordinator.wiring()
                  .database(database)
                  .transport(JetStreamEventLog.bind(connection))
                  .clock(clock)
                  .settings(settings)
                  .shardAlarmWork(Lifecycle.shardAlarmWork(clock, settings))
                  .wire()) {
        Commands commands =
            new Commands(new JetStreamCommandTransport(connection), new EnvelopeCodec());
        Lifecycle lifecycle = new Lifecycle(coordinator, commands, clock, settings);
        assertThat(lifecycle.projects().create(project, "tenant-1", "Kill test").get()).isTrue();
        if (liveApp) {
          assertThat(lifecycle.projects().setLiveApp(project, true, "cmd_test_app").get()).isTrue();
        }
        ChangeCreated created = lifecycle.changes().create(project, "req-" + project, graph).get();
        assertThat(created.created()).isTrue();
        // The publisher kicks after each commit; a recover() kicks whatever is still waiting.
        if (!published(database, Duration.ofSeconds(10))) {
          coordinator.recover();
          assertThat(published(database, Duration.ofSeconds(30))).as("outbox published").isTrue();
        }
        return created.change().changeId();
      }
    }
  }

  private static boolean published(Database database, Duration within) {
    try {
      await()
          .atMost(within)
          .pollInterval(Duration.ofMillis(50))
          .until(
              () ->
                  database.read(
                          tx ->
                              tx.queryLong(
                                  "SELECT COUNT(*) FROM outbox WHERE state <> ?",
                                  OutboxRowState.PUBLISHED.dbName()))
                      == 0);
      return true;
    } catch (ConditionTimeoutException e) {
      return false;
    }
  }
}
