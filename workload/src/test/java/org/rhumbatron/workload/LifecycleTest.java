package org.rhumbatron.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.candidates.Approval;
import org.rhumbatron.lifecycle.changes.ChangeCreated;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.server.CoreConfig;
import org.rhumbatron.server.CoreService;
import org.rhumbatron.server.LifecycleSteps;
import org.rhumbatron.server.StreamReader;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * The first half of the Change lifecycle in core, end to end on a real nats-server and database: a
 * Project through project.provision, a Change of 20 Tasks, simulated Agents, the router's dispatch
 * and settle, until the Change is verifying. Run against SQLite and PostgreSQL.
 */
class LifecycleTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @TempDir Path data;

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  CoreService start(Map<String, String> overrides) throws Exception {
    Settings settings =
        Settings.defaults().with(Map.of("agents.simulated.step-delay", "5ms")).with(overrides);
    return CoreService.start(new CoreConfig(nats.url(), data, db().url(), 0, settings));
  }

  @DatabaseTest
  void twentyTasksRunInDependencyOrderWithAtMostEightAgentsUntilVerifying() throws Exception {
    WorkGraph graph = Workloads.twentyTasks();
    try (CoreService core = start(Map.of())) {
      Lifecycle lifecycle = core.lifecycle();
      LifecycleSteps.provision(lifecycle, "p-dag");
      ChangeCreated created = lifecycle.changes().create("p-dag", "req-1", graph).get();
      assertThat(created.created()).isTrue();
      String changeId = created.change().changeId();
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> lifecycle.changes().change(changeId).orElseThrow().reachedVerification());
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  StreamReader.events(core.nats(), "p-dag").stream()
                      .anyMatch(e -> e.eventType() == EventType.VERIFICATION_STARTED));
      List<Event> events = StreamReader.events(core.nats(), "p-dag");
      LifecycleChecker check = LifecycleChecker.check(graph, changeId, 8, events);
      assertThat(check.problems).isEmpty();
      assertThat(check.completionOrder).hasSize(20);
      assertThat(check.maxHeld).isEqualTo(8); // 12 roots: the limit was reached, never passed
      assertThat(lifecycle.changes().tasks(changeId)).allMatch(t -> t.state().equals("completed"));
      assertThat(events).filteredOn(e -> e.eventType() == EventType.PROJECT_CREATED).hasSize(1);
    }
  }

  /** Runs the 20-Task Change with {@code failureRate} until it is verifying or failed. */
  private void runWithFailures(String failureRate, String expectedEnd) throws Exception {
    WorkGraph graph = Workloads.twentyTasks();
    try (CoreService core = start(Map.of("agents.simulated.failure-rate", failureRate))) {
      Lifecycle lifecycle = core.lifecycle();
      LifecycleSteps.provision(lifecycle, "p-fail");
      String changeId =
          lifecycle.changes().create("p-fail", "req-1", graph).get().change().changeId();
      await()
          .atMost(Duration.ofSeconds(90))
          .until(
              () -> {
                ChangeInfo now = lifecycle.changes().change(changeId).orElseThrow();
                return now.reachedVerification() || now.state().equals("failed");
              });
      // verifying, or past it: the verification Workflow goes on at once
      String end =
          lifecycle.changes().change(changeId).orElseThrow().reachedVerification()
              ? "verifying"
              : "failed";
      EventType endType =
          end.equals("failed") ? EventType.CHANGE_FAILED : EventType.VERIFICATION_STARTED;
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  StreamReader.events(core.nats(), "p-fail").stream()
                      .anyMatch(e -> e.eventType() == endType));
      List<Event> events = StreamReader.events(core.nats(), "p-fail");
      LifecycleChecker check = LifecycleChecker.check(graph, changeId, 8, events);
      assertThat(check.problems).isEmpty();
      // Every failed attempt led through change.settle: to the Task's next attempt (ready again),
      // or, on its last attempt, to the failed Change.
      List<Event> failures =
          events.stream().filter(e -> e.eventType() == EventType.TASK_FAILED).toList();
      assertThat(failures).isNotEmpty();
      boolean lastAttemptFailed = false;
      for (Event failed : failures) {
        int attempt = failed.payload().path("attempt").asInt();
        boolean retried =
            events.stream()
                .anyMatch(
                    e ->
                        e.eventType() == EventType.TASK_READY
                            && failed.taskId().equals(e.taskId())
                            && e.payload().path("attempt").asInt() == attempt + 1);
        if (attempt >= 3) {
          lastAttemptFailed = true;
          assertThat(retried).as("a third failed attempt of " + failed.taskId()).isFalse();
        } else if (end.equals("verifying")) {
          assertThat(retried).as("the retry of " + failed.taskId() + " " + attempt).isTrue();
        }
      }
      assertThat(end).isEqualTo(expectedEnd);
      assertThat(end.equals("failed")).isEqualTo(lastAttemptFailed);
      if (end.equals("failed")) {
        assertThat(lifecycle.changes().change(changeId).orElseThrow().reason())
            .contains("attempt 3 of 3");
        assertThat(events).filteredOn(e -> e.eventType() == EventType.CHANGE_FAILED).hasSize(1);
        assertThat(events).noneMatch(e -> e.eventType() == EventType.VERIFICATION_STARTED);
      } else {
        assertThat(check.completionOrder).hasSize(20);
      }
    }
  }

  @DatabaseTest
  void withSomeFailuresFailedTasksRunAgainThroughChangeSettleUntilVerifying() throws Exception {
    runWithFailures("0.15", "verifying"); // seed 1: failures, none on a third attempt
  }

  @DatabaseTest
  void whenEveryAttemptFailsTheChangeFailsAfterATasksLastAttempt() throws Exception {
    runWithFailures("1.0", "failed");
  }

  @DatabaseTest
  void aChangeWithALiveAppTravelsFromCreationToCompletedThroughEventsAndCommands()
      throws Exception {
    WorkGraph graph = Workloads.twentyTasks();
    try (CoreService core =
        start(Map.of("verifier.simulated.duration", "5ms", "release.simulated.duration", "5ms"))) {
      Lifecycle lifecycle = core.lifecycle();
      LifecycleSteps.provision(lifecycle, "p-live");
      lifecycle.commands().provisionApp("p-live").get();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> lifecycle.projects().project("p-live").orElseThrow().hasLiveApp());
      String changeId =
          lifecycle.changes().create("p-live", "req-1", graph).get().change().changeId();
      await()
          .atMost(Duration.ofSeconds(90))
          .until(
              () ->
                  lifecycle
                      .changes()
                      .change(changeId)
                      .orElseThrow()
                      .state()
                      .equals("awaiting_approval"));
      Approval approval = lifecycle.approvals().approve(changeId).get();
      assertThat(approval.releaseId()).isEqualTo("rel_p-live_1");
      LifecycleSteps.awaitState(lifecycle, changeId, "completed", 60);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  StreamReader.events(core.nats(), "p-live").stream()
                      .anyMatch(e -> e.eventType() == EventType.CHANGE_COMPLETED));
      List<Event> events = StreamReader.events(core.nats(), "p-live");
      LifecycleChecker check = LifecycleChecker.check(graph, changeId, 8, events);
      assertThat(check.problems).isEmpty();
      assertThat(check.completionOrder).hasSize(20);
      List<EventType> lifecycleOrder =
          events.stream()
              .map(Event::eventType)
              .filter(
                  t ->
                      List.of(
                              EventType.VERIFICATION_STARTED,
                              EventType.CANDIDATE_CREATED,
                              EventType.CANDIDATE_VERIFIED,
                              EventType.CHANGE_AWAITING_APPROVAL,
                              EventType.ARTIFACT_PROMOTED,
                              EventType.CANONICAL_ADVANCED,
                              EventType.CHANGE_RELEASING,
                              EventType.RELEASE_COMPLETED,
                              EventType.CHANGE_COMPLETED)
                          .contains(t))
              .toList();
      assertThat(lifecycleOrder)
          .containsExactly(
              EventType.VERIFICATION_STARTED,
              EventType.CANDIDATE_CREATED,
              EventType.CANDIDATE_VERIFIED,
              EventType.CHANGE_AWAITING_APPROVAL,
              EventType.ARTIFACT_PROMOTED,
              EventType.CANONICAL_ADVANCED,
              EventType.CHANGE_RELEASING,
              EventType.RELEASE_COMPLETED,
              EventType.CHANGE_COMPLETED);
    }
  }

  @DatabaseTest
  void twoChangesRacingOnOneBaseOneIsPromotedTheOtherRecomposedAndPromotedAtGenerationTwo()
      throws Exception {
    WorkGraph graph =
        WorkGraph.of(
            new WorkGraph.TaskSpec("a", null, List.of(), List.of("path:src/a/")),
            new WorkGraph.TaskSpec("b", null, List.of("a"), List.of("path:src/b/")));
    try (CoreService core =
        start(Map.of("verifier.simulated.duration", "5ms", "release.simulated.duration", "5ms"))) {
      Lifecycle lifecycle = core.lifecycle();
      LifecycleSteps.provision(lifecycle, "p-race");
      String first = lifecycle.changes().create("p-race", "req-1", graph).get().change().changeId();
      String second =
          lifecycle.changes().create("p-race", "req-2", graph).get().change().changeId();
      for (String c : List.of(first, second)) {
        LifecycleSteps.awaitState(lifecycle, c, "awaiting_approval", 60);
      }
      assertThat(lifecycle.approvals().approve(first).get().generation()).isEqualTo(1);
      // canonical.advanced → candidates.recompose: the second's Candidate on base 0 is stale, and
      // it is composed again on generation 1, verified, and awaits approval once more.
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  core.coordinator()
                          .database()
                          .read(
                              tx ->
                                  tx.queryLong(
                                      "SELECT COUNT(*) FROM candidates WHERE change_id = ?"
                                          + " AND state = 'verified' AND base_generation = 1",
                                      second))
                      == 1);
      assertThat(lifecycle.changes().change(second).orElseThrow().state())
          .isEqualTo("awaiting_approval");
      Approval approval = lifecycle.approvals().approve(second).get();
      assertThat(approval.promotion().name()).isEqualTo("PROMOTED");
      assertThat(approval.generation()).isEqualTo(2);
      assertThat(lifecycle.changes().change(second).orElseThrow().state()).isEqualTo("completed");
      long stale =
          core.coordinator()
              .database()
              .read(
                  tx ->
                      tx.queryLong(
                          "SELECT COUNT(*) FROM candidates WHERE change_id = ? AND state = 'stale'",
                          second));
      assertThat(stale).isEqualTo(1);
    }
  }

  @DatabaseTest
  void withAutoApproveAChangeCompletesWithoutAnOperator() throws Exception {
    try (CoreService core =
        start(
            Map.of(
                "changes.auto-approve",
                "true",
                "verifier.simulated.duration",
                "0ms",
                "release.simulated.duration",
                "0ms"))) {
      Lifecycle lifecycle = core.lifecycle();
      LifecycleSteps.provision(lifecycle, "p-auto");
      String changeId =
          lifecycle
              .changes()
              .create("p-auto", "req-1", Workloads.twentyTasks())
              .get()
              .change()
              .changeId();
      LifecycleSteps.awaitState(lifecycle, changeId, "completed", 90);
      assertThat(lifecycle.projects().project("p-auto").orElseThrow().canonicalGeneration())
          .isEqualTo(1);
    }
  }

  @DatabaseTest
  void aRejectedCandidateSendsTheChangeBackToWorkThenItsSecondRejectionFailsIt() throws Exception {
    try (CoreService core =
        start(
            Map.of(
                "verifier.simulated.pass-rate",
                "0.0",
                "verifier.simulated.duration",
                "0ms",
                "release.simulated.duration",
                "0ms"))) {
      Lifecycle lifecycle = core.lifecycle();
      LifecycleSteps.provision(lifecycle, "p-reject");
      String changeId =
          lifecycle
              .changes()
              .create("p-reject", "req-1", Workloads.twentyTasks())
              .get()
              .change()
              .changeId();
      LifecycleSteps.awaitState(lifecycle, changeId, "failed", 90);
      assertThat(lifecycle.changes().change(changeId).orElseThrow().reason())
          .contains("was rejected by verification");
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  StreamReader.events(core.nats(), "p-reject").stream()
                      .anyMatch(e -> e.eventType() == EventType.CHANGE_FAILED));
      List<Event> events = StreamReader.events(core.nats(), "p-reject");
      // changes.verification-attempts = 2: the first rejection sends it back to work, the second
      // fails it.
      assertThat(events).filteredOn(e -> e.eventType() == EventType.CANDIDATE_REJECTED).hasSize(2);
      assertThat(events).filteredOn(e -> e.eventType() == EventType.CHANGE_REOPENED).hasSize(1);
      assertThat(events)
          .filteredOn(e -> e.eventType() == EventType.VERIFICATION_STARTED)
          .hasSize(2);
      assertThat(lifecycle.changes().tasks(changeId)).allMatch(t -> t.attempt() == 2);
      assertThat(LifecycleChecker.check(Workloads.twentyTasks(), changeId, 8, events).problems)
          .isEmpty();
    }
  }
}
