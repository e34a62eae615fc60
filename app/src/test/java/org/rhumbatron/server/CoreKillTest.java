package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.nats.client.Connection;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.app.CoreProcess;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.WorkGraph;
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
    // 40 ms a step: the run takes seconds, so the kill lands mid-run. What the killed core had
    // fetched and not acked comes back after the ack wait: 10 s here instead of the router's 5
    // minutes and the queues' 60 s, so a kill in such a window still ends within the test's wait.
    Path config =
        CoreTwice.config(
            data,
            "agents.simulated.step-delay=40ms",
            "router.ack-wait=10s",
            "queues.ack-wait=10s",
            "queues.ack-extend-every=4s");
    Settings settings = Settings.load(config, Map.of());
    String dbFile = db().url();
    WorkGraph graph = Workloads.twentyTasks();
    String changeId =
        CoreProcess.createProjectAndChange(nats.url(), PROJECT, false, settings, dbFile, graph);
    CoreTwice.run(
        "CoreKillTest",
        nats.url(),
        data,
        dbFile,
        config,
        cores -> {
          killAndRestart(cores, dbFile, changeId, graph);
          return null;
        });
  }

  private void killAndRestart(CoreTwice cores, String dbFile, String changeId, WorkGraph graph)
      throws Exception {
    Process first = cores.startFirst();
    cores.awaitFirst(Duration.ofSeconds(60), () -> completedTasks(dbFile, changeId) >= 6);
    long before = System.nanoTime();
    cores.killFirst();
    long completedAtKill = completedTasks(dbFile, changeId);
    System.out.printf(
        "CoreKillTest: core SIGKILLed (exit %d) with %d of 20 tasks completed; tasks %s;"
            + " deliveries the killed core left unacked: %s%n",
        first.exitValue(), completedAtKill, taskStates(dbFile, changeId), unacked());
    assertThat(completedAtKill).as("the kill came mid-run").isBetween(1L, 19L);

    Process second = cores.startSecond();
    cores.awaitSecond(
        Duration.ofSeconds(90),
        () -> ChangeInfo.VERIFIED_ONWARD.contains(changeState(dbFile, changeId)));
    // verifying, or past it: the verification Workflow goes on at once
    assertThat(changeState(dbFile, changeId)).isIn(ChangeInfo.VERIFIED_ONWARD);
    System.out.printf(
        "CoreKillTest: verifying %d ms after the kill%n", (System.nanoTime() - before) / 1_000_000);

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

    cores.stopSecond();
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
        CoreTwice.read(
            dbFile,
            "SELECT COUNT(*) FROM tasks WHERE change_id = ? AND state = 'completed'",
            changeId));
  }

  private static String changeState(String dbFile, String changeId) throws SQLException {
    return CoreTwice.read(dbFile, "SELECT state FROM changes WHERE change_id = ?", changeId);
  }
}
