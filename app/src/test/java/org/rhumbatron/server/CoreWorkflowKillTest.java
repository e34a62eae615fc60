package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.nats.client.Connection;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.app.CoreProcess;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.lifecycle.changes.WorkGraph.TaskSpec;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;
import org.rhumbatron.workload.LifecycleChecker;

/**
 * Core SIGKILLed inside a Workflow step and started again: inside the verification Workflow's
 * {@code verify} step, and (with a live app) inside the release Workflow's {@code release} step.
 * After the restart the instance resumes at the step it was in, no step done before the kill runs
 * again, the Change completes, and no Event is written twice. Core runs as a child process on a
 * private nats-server and a SQLite file; the test creates the Project and the Change before core
 * starts, then only reads.
 */
class CoreWorkflowKillTest {
  /** How long the simulated verify and release steps take: the kill lands inside one. */
  private static final Duration STEP = Duration.ofSeconds(3);

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  /** The database core runs on (SQLite file or PostgreSQL), as a JDBC URL. */
  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  @TempDir Path data;

  @DatabaseTest
  void killedInsideTheVerifyStepResumesAndTheChangeCompletes() throws Exception {
    Run run = killAndRestart("p-wfkill-verify", false, "verification", "verify");
    // Nothing was done before the kill; after it, verify ran once, then record and approve.
    assertThat(run.stepsAtKill).isEmpty();
    assertThat(run.stepsAfter.keySet())
        .containsExactlyInAnyOrder(
            run.verification + "/verify",
            run.verification + "/record",
            run.verification + "/approve");
    assertThat(count(run.events, EventType.CHANGE_RELEASING)).isZero();
    assertThat(count(run.events, EventType.RELEASE_COMPLETED)).isZero();
    assertThat(instanceCount(run.dbFile, "release")).isZero();
  }

  @DatabaseTest
  void killedInsideTheReleaseStepResumesAndTheChangeCompletes() throws Exception {
    Run run = killAndRestart("p-wfkill-release", true, "release", "release");
    String release = run.instance;
    // The verification Workflow was done before the kill: its three steps were not run again.
    assertThat(run.stepsAtKill.keySet())
        .containsExactlyInAnyOrder(
            run.verification + "/verify",
            run.verification + "/record",
            run.verification + "/approve");
    assertThat(run.stepsAfter.keySet())
        .containsExactlyInAnyOrder(
            run.verification + "/verify",
            run.verification + "/record",
            run.verification + "/approve",
            release + "/release",
            release + "/record");
    assertThat(run.instancesAtKill.get(run.verification)).startsWith("completed ");
    assertThat(count(run.events, EventType.CHANGE_RELEASING)).isEqualTo(1);
    assertThat(count(run.events, EventType.RELEASE_COMPLETED)).isEqualTo(1);
    assertThat(count(run.events, EventType.RELEASE_FAILED)).isZero();
    assertThat(
            CoreTwice.read(run.dbFile, "SELECT state FROM releases WHERE release_id = ?", release))
        .isEqualTo("completed");
  }

  /** What one kill and restart left. */
  private record Run(
      String dbFile,
      String changeId,
      String instance,
      String verification,
      Map<String, Long> stepsAtKill,
      Map<String, Long> stepsAfter,
      Map<String, String> instancesAtKill,
      List<Event> events) {}

  /**
   * Runs core until an instance of {@code type} is running inside {@code step} (its result not
   * stored), SIGKILLs it, starts it again and waits for the Change to complete; then checks what
   * both cases share.
   */
  private Run killAndRestart(String project, boolean liveApp, String type, String step)
      throws Exception {
    long testStart = System.nanoTime();
    // Acks wait 10 s instead of the router's 5 minutes and the queues' 60 s, so what the killed
    // core fetched and did not ack comes back within the test's wait.
    Path config =
        CoreTwice.config(
            data,
            "agents.simulated.step-delay=5ms",
            "verifier.simulated.duration=" + STEP.toMillis() + "ms",
            "release.simulated.duration=" + STEP.toMillis() + "ms",
            "changes.auto-approve=true",
            "router.ack-wait=10s",
            "queues.ack-wait=10s",
            "queues.ack-extend-every=4s");
    Settings settings = Settings.load(config, Map.of());
    String dbFile = db().url();
    WorkGraph graph = threeTasks();
    String changeId =
        CoreProcess.createProjectAndChange(nats.url(), project, liveApp, settings, dbFile, graph);
    return CoreTwice.run(
        "CoreWorkflowKillTest",
        nats.url(),
        data,
        dbFile,
        config,
        cores ->
            killAndRestart(
                cores, testStart, project, liveApp, type, step, dbFile, changeId, graph));
  }

  private Run killAndRestart(
      CoreTwice cores,
      long testStart,
      String project,
      boolean liveApp,
      String type,
      String step,
      String dbFile,
      String changeId,
      WorkGraph graph)
      throws Exception {
    Process first = cores.startFirst();
    // The instance running with the step's result not stored, a second into the step: the
    // step's thread is asleep in the simulated work, with two seconds left.
    String[] instance = new String[1];
    cores.awaitFirst(
        Duration.ofSeconds(60),
        () -> {
          String id = insideStep(dbFile, type, step, STEP.toMillis() / 3);
          instance[0] = id;
          return id != null;
        });
    cores.killFirst();
    long killedAt = System.nanoTime();
    long killedAtMs = System.currentTimeMillis();
    String id = instance[0];
    assertThat(id).as("a %s instance inside its %s step", type, step).isNotNull();
    // The kill landed inside the step: the instance is running and the step not stored.
    assertThat(state(dbFile, id)).isEqualTo("running");
    Map<String, Long> stepsAtKill = steps(dbFile);
    Map<String, String> instancesAtKill = instances(dbFile);
    assertThat(stepsAtKill).doesNotContainKey(id + "/" + step);
    assertThat(CoreTwice.read(dbFile, "SELECT state FROM changes WHERE change_id = ?", changeId))
        .isEqualTo(liveApp ? "releasing" : "verifying");
    System.out.printf(
        "CoreWorkflowKillTest: core SIGKILLed (exit %d) %d ms after the start, inside %s %s"
            + " step %s; steps stored: %s%n",
        first.exitValue(), (killedAt - testStart) / 1_000_000, type, id, step, stepsAtKill);

    Process second = cores.startSecond();
    cores.awaitSecond(
        Duration.ofSeconds(60),
        () ->
            "completed"
                .equals(
                    CoreTwice.read(
                        dbFile, "SELECT state FROM changes WHERE change_id = ?", changeId)));
    assertThat(CoreTwice.read(dbFile, "SELECT state FROM changes WHERE change_id = ?", changeId))
        .isEqualTo("completed");
    System.out.printf(
        "CoreWorkflowKillTest: change completed %d ms after the kill%n",
        (System.nanoTime() - killedAt) / 1_000_000);
    assertThat(cores.secondLines).anyMatch(l -> l.contains("resumed 1 running workflow instances"));
    // The step that completes the Change (approve, or the release's record) stores its result
    // and completes its instance just after.
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(20))
        .until(
            () ->
                Long.parseLong(
                        CoreTwice.read(
                            dbFile,
                            "SELECT COUNT(*) FROM workflow_instances WHERE state = 'running'"))
                    == 0);

    // The instance completed; the steps done before the kill kept their rows (not run again),
    // and each step has one row (the key is instance and step).
    assertThat(state(dbFile, id)).isEqualTo("completed");
    Map<String, Long> stepsAfter = steps(dbFile);
    assertThat(stepsAfter).containsAllEntriesOf(stepsAtKill);
    // A step's row is inserted ON CONFLICT DO NOTHING, so a step run again would leave it as it
    // was: what shows that no done step ran again is that only the interrupted instance resumed
    // ("resumed 1" above) and that an instance completed before the kill was not touched.
    Map<String, String> instancesAfter = instances(dbFile);
    instancesAtKill.forEach(
        (instanceId, row) -> {
          if (row.startsWith("completed ")) {
            assertThat(instancesAfter.get(instanceId)).as(instanceId).isEqualTo(row);
          }
        });
    assertThat(stepsAfter.get(id + "/" + step))
        .as("the step the kill interrupted ran again, in the second core")
        .isGreaterThan(killedAtMs);
    assertThat(
            Long.parseLong(
                CoreTwice.read(
                    dbFile, "SELECT COUNT(*) FROM workflow_instances WHERE state <> 'completed'")))
        .as("every Workflow instance completed")
        .isZero();
    String verification =
        CoreTwice.read(
            dbFile,
            "SELECT instance_id FROM workflow_instances WHERE workflow_type = ?",
            "verification");
    assertThat(instanceCount(dbFile, "verification")).isEqualTo(1);

    List<Event> events;
    try (Connection connection = JetStreamConnections.connect(nats.url(), "wf-kill-test-reader")) {
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  StreamReader.events(connection, project).stream()
                      .anyMatch(e -> e.eventType() == EventType.CHANGE_COMPLETED));
      // change.completed is the last Event of the transaction that completes the Change
      events = StreamReader.events(connection, project);
    }
    Set<String> ids = new HashSet<>();
    List<String> twice = new ArrayList<>();
    for (Event e : events) {
      if (!ids.add(e.eventId())) {
        twice.add(e.eventId() + " (" + e.eventType().wireName() + ")");
      }
    }
    assertThat(twice).as("events twice on the stream").isEmpty();
    LifecycleChecker check = LifecycleChecker.check(graph, changeId, 8, events);
    assertThat(check.problems).isEmpty();
    assertThat(check.states.values()).containsOnly("completed");
    for (EventType t :
        List.of(
            EventType.VERIFICATION_STARTED,
            EventType.CANDIDATE_CREATED,
            EventType.CANDIDATE_VERIFIED,
            EventType.CANDIDATE_PROMOTED,
            EventType.ARTIFACT_PROMOTED,
            EventType.CANONICAL_ADVANCED,
            EventType.CHANGE_COMPLETED)) {
      assertThat(count(events, t)).as(t.wireName()).isEqualTo(1);
    }
    assertThat(count(events, EventType.CANDIDATE_REJECTED)).isZero();

    cores.stopSecond();
    System.out.printf(
        "CoreWorkflowKillTest: %s case took %d ms%n",
        type, (System.nanoTime() - testStart) / 1_000_000);
    return new Run(
        dbFile, changeId, id, verification, stepsAtKill, stepsAfter, instancesAtKill, events);
  }

  /** Three Tasks, the third after the other two, each with its own resource scope. */
  private static WorkGraph threeTasks() {
    return new WorkGraph(
        List.of(
            new TaskSpec("t01", "task 1", List.of(), List.of("path:src/a/")),
            new TaskSpec("t02", "task 2", List.of(), List.of("path:src/b/")),
            new TaskSpec("t03", "task 3", List.of("t01", "t02"), List.of("path:src/c/"))));
  }

  private static long count(List<Event> events, EventType type) {
    return events.stream().filter(e -> e.eventType() == type).count();
  }

  /**
   * The instance of {@code type} that is running, started at least {@code intoMs} ago and has no
   * result of {@code step} stored; null when there is none.
   */
  private static String insideStep(String dbFile, String type, String step, long intoMs)
      throws SQLException {
    try (java.sql.Connection c = DriverManager.getConnection(dbFile);
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT instance_id FROM workflow_instances i WHERE workflow_type = ?"
                    + " AND state = 'running' AND created_at_ms <= ? AND NOT EXISTS (SELECT 1"
                    + " FROM workflow_steps s WHERE s.instance_id = i.instance_id"
                    + " AND s.step_name = ?)")) {
      ps.setString(1, type);
      ps.setLong(2, System.currentTimeMillis() - intoMs);
      ps.setString(3, step);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  /** Every stored step, {@code <instance>/<step>} to its completed_at_ms. */
  private static Map<String, Long> steps(String dbFile) throws SQLException {
    Map<String, Long> out = new TreeMap<>();
    try (java.sql.Connection c = DriverManager.getConnection(dbFile);
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT instance_id, step_name, completed_at_ms FROM workflow_steps");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        Long before = out.put(rs.getString(1) + "/" + rs.getString(2), rs.getLong(3));
        assertThat(before).as("one row per step").isNull();
      }
    }
    return out;
  }

  /** Every Workflow instance, its id to {@code <state> <updated_at_ms>}. */
  private static Map<String, String> instances(String dbFile) throws SQLException {
    Map<String, String> out = new TreeMap<>();
    try (java.sql.Connection c = DriverManager.getConnection(dbFile);
        PreparedStatement ps =
            c.prepareStatement("SELECT instance_id, state, updated_at_ms FROM workflow_instances");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        out.put(rs.getString(1), rs.getString(2) + " " + rs.getLong(3));
      }
    }
    return out;
  }

  private static String state(String dbFile, String instanceId) throws SQLException {
    return CoreTwice.read(
        dbFile, "SELECT state FROM workflow_instances WHERE instance_id = ?", instanceId);
  }

  private static long instanceCount(String dbFile, String type) throws SQLException {
    return Long.parseLong(
        CoreTwice.read(
            dbFile, "SELECT COUNT(*) FROM workflow_instances WHERE workflow_type = ?", type));
  }
}
