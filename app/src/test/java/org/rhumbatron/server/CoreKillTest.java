package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.nats.client.Connection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.app.CoreProcess;
import org.rhumbatron.lifecycle.ChangeInfo;
import org.rhumbatron.lifecycle.WorkGraph;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;
import org.rhumbatron.workload.LifecycleChecker;
import org.rhumbatron.workload.Workloads;

/**
 * Core SIGKILLed in the middle of a 20-Task run and started again: the run still reaches {@code
 * verifying}, with no Event twice. Core runs as a child process on a private nats-server and a
 * SQLite file; the test creates the Project and the Change before core starts, then only reads.
 */
class CoreKillTest {
  private static final String PROJECT = "p-kill";

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  /** The database core runs on (SQLite file or PostgreSQL), as a JDBC URL. */
  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  @TempDir Path data;

  @DatabaseTest
  void aRunKilledMidwayAndRestartedReachesVerifyingWithNoEventTwice() throws Exception {
    Path config = data.resolve("core.properties");
    // 40 ms a step: the run takes seconds, so the kill lands mid-run. What the killed core had
    // fetched and not acked comes back after the ack wait: 10 s here instead of the router's 5
    // minutes and the queues' 60 s, so a kill in such a window still ends within the test's wait.
    Files.writeString(
        config,
        String.join(
            "\n",
            "agents.simulated.step-delay=40ms",
            "router.ack-wait=10s",
            "queues.ack-wait=10s",
            "queues.ack-extend-every=4s",
            ""));
    Settings settings = Settings.load(config, Map.of());
    String dbFile = db().url();
    WorkGraph graph = Workloads.twentyTasks();
    String changeId =
        CoreProcess.createProjectAndChange(nats.url(), PROJECT, false, settings, dbFile, graph);

    String[] args = {
      "core",
      "--nats",
      nats.url(),
      "--data",
      data.resolve("core").toString(),
      "--db",
      dbFile,
      "--http",
      "0",
      "--config",
      config.toString()
    };
    List<String> firstLines = new CopyOnWriteArrayList<>();
    List<String> secondLines = new CopyOnWriteArrayList<>();
    Process first = null;
    Process second = null;
    try {
      first = CoreProcess.launch(args);
      CoreProcess.pump(first, firstLines);
      Process core = first;
      await()
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(20))
          .until(() -> completedTasks(dbFile, changeId) >= 6 || !core.isAlive());
      assertThat(first.isAlive()).as("first core, output: %s", firstLines).isTrue();
      long before = System.nanoTime();
      first.toHandle().destroyForcibly(); // SIGKILL on Linux
      assertThat(first.waitFor(30, TimeUnit.SECONDS)).as("first core died").isTrue();
      long completedAtKill = completedTasks(dbFile, changeId);
      System.out.printf(
          "CoreKillTest: core SIGKILLed (exit %d) with %d of 20 tasks completed; tasks %s;"
              + " deliveries the killed core left unacked: %s%n",
          first.exitValue(), completedAtKill, taskStates(dbFile, changeId), unacked());
      assertThat(first.exitValue()).as("killed by SIGKILL").isEqualTo(128 + 9);
      assertThat(completedAtKill).as("the kill came mid-run").isBetween(1L, 19L);

      second = CoreProcess.launch(args);
      CoreProcess.pump(second, secondLines);
      Process again = second;
      await()
          .atMost(Duration.ofSeconds(90))
          .pollInterval(Duration.ofMillis(100))
          .until(
              () ->
                  ChangeInfo.VERIFIED_ONWARD.contains(changeState(dbFile, changeId))
                      || !again.isAlive());
      assertThat(second.isAlive()).as("second core, output: %s", secondLines).isTrue();
      // verifying, or past it: the verification Workflow goes on at once
      assertThat(changeState(dbFile, changeId)).isIn(ChangeInfo.VERIFIED_ONWARD);
      System.out.printf(
          "CoreKillTest: verifying %d ms after the kill%n",
          (System.nanoTime() - before) / 1_000_000);

      try (Connection connection = JetStreamConnections.connect(nats.url(), "kill-test-reader")) {
        await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () ->
                    StreamReader.events(connection, PROJECT).stream()
                        .anyMatch(e -> e.eventType() == EventType.VERIFICATION_STARTED));
        List<Event> events = StreamReader.events(connection, PROJECT);
        LifecycleChecker check = LifecycleChecker.check(graph, changeId, 8, events);
        assertThat(check.problems).isEmpty();
        assertThat(check.completionOrder).hasSize(20).doesNotHaveDuplicates();
        assertThat(check.states.values()).containsOnly("completed");
        assertThat(events)
            .filteredOn(e -> e.eventType() == EventType.VERIFICATION_STARTED)
            .hasSize(1);
        assertThat(events).filteredOn(e -> e.eventType() == EventType.PROJECT_CREATED).hasSize(1);
      }
      assertThat(completedTasks(dbFile, changeId)).isEqualTo(20);

      second.toHandle().destroy(); // SIGTERM
      assertThat(second.waitFor(30, TimeUnit.SECONDS)).as("second core stopped").isTrue();
      assertThat(secondLines).anyMatch(l -> l.contains("core stopped"));
    } catch (Throwable t) {
      System.out.println("CoreKillTest failed; the first core printed:");
      firstLines.forEach(l -> System.out.println("  1| " + l));
      System.out.println("the second core printed:");
      secondLines.forEach(l -> System.out.println("  2| " + l));
      throw t;
    } finally {
      for (Process p : new Process[] {first, second}) {
        if (p != null && p.isAlive()) {
          p.destroyForcibly();
          p.waitFor(30, TimeUnit.SECONDS);
        }
      }
    }
  }

  /** Per consumer of the project's event stream and of COMMANDS, deliveries not acked yet. */
  private Map<String, Long> unacked() throws Exception {
    Map<String, Long> out = new TreeMap<>();
    try (Connection connection = JetStreamConnections.connect(nats.url(), "kill-test-probe")) {
      var jsm = connection.jetStreamManagement();
      for (String stream :
          List.of(EventStreams.streamName(EventStreams.streamIndex(PROJECT)), "COMMANDS")) {
        for (var info : jsm.getConsumers(stream)) {
          if (info.getNumAckPending() > 0) {
            out.put(info.getName(), info.getNumAckPending());
          }
        }
      }
    }
    return out;
  }

  private static String taskStates(String dbFile, String changeId) throws SQLException {
    try (java.sql.Connection c = DriverManager.getConnection(dbFile);
        var st =
            c.prepareStatement(
                "SELECT state, COUNT(*) FROM tasks WHERE change_id = ? GROUP BY state"
                    + " ORDER BY state")) {
      st.setString(1, changeId);
      List<String> parts = new java.util.ArrayList<>();
      try (var rs = st.executeQuery()) {
        while (rs.next()) {
          parts.add(rs.getLong(2) + " " + rs.getString(1));
        }
      }
      return String.join(", ", parts);
    }
  }

  private static long completedTasks(String dbFile, String changeId) throws SQLException {
    return Long.parseLong(
        read(
            dbFile,
            "SELECT COUNT(*) FROM tasks WHERE change_id = ? AND state = 'completed'",
            changeId));
  }

  private static String changeState(String dbFile, String changeId) throws SQLException {
    return read(dbFile, "SELECT state FROM changes WHERE change_id = ?", changeId);
  }

  /** One value read with plain JDBC, on a connection of its own: this process never writes. */
  private static String read(String dbFile, String sql, String arg) throws SQLException {
    try (java.sql.Connection c = DriverManager.getConnection(dbFile);
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, arg);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }
}
