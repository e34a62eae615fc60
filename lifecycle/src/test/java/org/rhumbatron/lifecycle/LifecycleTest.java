package org.rhumbatron.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.lifecycle.changes.ChangeCreated;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.changes.Dispatched;
import org.rhumbatron.lifecycle.changes.Settled;
import org.rhumbatron.lifecycle.changes.Wake;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.lifecycle.changes.WorkGraph.TaskSpec;
import org.rhumbatron.lifecycle.changes.WorkGraphException;
import org.rhumbatron.lifecycle.tasks.TaskInfo;
import org.rhumbatron.lifecycle.tasks.TaskNotHeldException;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/** The lifecycle's state changes on a real nats-server and database; SQLite and PostgreSQL. */
class LifecycleTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  private LifecycleFixture f;
  private Lifecycle lifecycle;

  @BeforeEach
  void start() throws Exception {
    f = new LifecycleFixture(nats.url(), db().url(), Map.of());
    lifecycle = f.lifecycle;
  }

  @AfterEach
  void stop() {
    f.close();
  }

  private static TaskSpec task(String key, String... deps) {
    return new TaskSpec(key, "task " + key, List.of(deps), List.of("path:src/" + key + "/"));
  }

  private long written() {
    return f.count("SELECT COUNT(*) FROM changes") + f.count("SELECT COUNT(*) FROM tasks");
  }

  @DatabaseTest
  void aWorkGraphThatIsNoValidDagIsRefusedNamingWhyAndNothingIsWritten() throws Exception {
    f.project("p1");
    long outbox = f.count("SELECT COUNT(*) FROM outbox");
    Map<WorkGraph, String> bad =
        Map.of(
            new WorkGraph(List.of()),
            "the graph is empty",
            WorkGraph.of(task("a"), task("b", "a"), task("a")),
            "duplicate task key \"a\"",
            WorkGraph.of(task("a"), task("b", "zz")),
            "task \"b\" depends on unknown task \"zz\"",
            WorkGraph.of(task("a", "c"), task("b", "a"), task("c", "b"), task("d")),
            "cycle: a -> c -> b -> a",
            WorkGraph.of(task("solo", "solo")),
            "cycle: solo -> solo",
            WorkGraph.of(task("bad key")),
            "task key \"bad key\"",
            WorkGraph.of(new TaskSpec("a", null, List.of(), List.of("path:\u0001"))),
            "task \"a\" has resource scope");
    bad.forEach(
        (graph, message) ->
            assertThatThrownBy(() -> lifecycle.changes().create("p1", "req-" + message, graph))
                .isInstanceOf(WorkGraphException.class)
                .hasMessageContaining(message));
    assertThat(written()).isZero();
    assertThat(f.count("SELECT COUNT(*) FROM outbox")).isEqualTo(outbox);
  }

  @DatabaseTest
  void aChangeOnAnUnknownOrArchivedProjectIsRefusedAndNothingIsWritten() throws Exception {
    WorkGraph graph = WorkGraph.of(task("a"));
    assertThatThrownBy(() -> lifecycle.changes().create("p-none", "r1", graph).get())
        .hasCauseInstanceOf(LifecycleException.class)
        .hasMessageContaining("unknown project p-none");
    f.project("p-arch");
    assertThat(lifecycle.projects().archive("p-arch").get()).isTrue();
    assertThat(lifecycle.projects().archive("p-arch").get()).isFalse(); // a repeat writes nothing
    assertThatThrownBy(() -> lifecycle.changes().create("p-arch", "r1", graph).get())
        .hasCauseInstanceOf(LifecycleException.class)
        .hasMessageContaining("project p-arch is archived");
    assertThat(written()).isZero();
    assertThat(f.outbox("project.archived")).isEqualTo(1);
    assertThat(f.outbox("change.created")).isZero();
  }

  @DatabaseTest
  void aRepeatedCreateReturnsTheFirstChangeAndWritesNothing() throws Exception {
    f.project("p1");
    ChangeCreated first =
        lifecycle.changes().create("p1", "req-1", "one", WorkGraph.of(task("a"))).get();
    ChangeCreated again =
        lifecycle.changes().create("p1", "req-1", "two", WorkGraph.of(task("x"), task("y"))).get();
    assertThat(first.created()).isTrue();
    assertThat(again.created()).isFalse();
    assertThat(again.change()).isEqualTo(first.change());
    assertThat(lifecycle.changes().tasks(first.change().changeId()))
        .extracting(TaskInfo::key)
        .containsExactly("a");
    assertThat(f.outbox("change.created")).isEqualTo(1);
    ChangeCreated other = lifecycle.changes().create("p1", "req-2", WorkGraph.of(task("a"))).get();
    assertThat(other.change().changeId()).isNotEqualTo(first.change().changeId());
  }

  @DatabaseTest
  void aStateTheLifecycleDoesNotKnowFailsTheReadNamingTheValueAndTheTable() throws Exception {
    f.project("p1");
    String c =
        lifecycle
            .changes()
            .create("p1", "req-1", WorkGraph.of(task("a")))
            .get()
            .change()
            .changeId();
    f.database.inTransaction(
        tx -> tx.update("UPDATE changes SET state = 'limbo' WHERE change_id = ?", c));
    f.database.inTransaction(
        tx -> tx.update("UPDATE tasks SET state = 'napping' WHERE change_id = ?", c));

    assertThatThrownBy(() -> lifecycle.changes().change(c))
        .hasMessageContaining("'limbo'")
        .hasMessageContaining("table changes");
    assertThatThrownBy(() -> lifecycle.changes().tasks(c))
        .hasMessageContaining("'napping'")
        .hasMessageContaining("table tasks");
  }

  @DatabaseTest
  void createChangeRacedByThreadsAndTwoCoresWithOneRequestIdMakesOneChange() throws Exception {
    f.project("p-race");
    WorkGraph graph = WorkGraph.of(task("a"), task("b", "a"));
    // A second core on the same database: its shard is another actor, so only the database's
    // unique constraint keeps the Change single.
    try (LifecycleFixture other = new LifecycleFixture(nats.url(), db().url(), Map.of())) {
      for (int round = 0; round < 5; round++) {
        String request = "req-" + round;
        ExecutorService pool = Executors.newFixedThreadPool(4);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<ChangeCreated>> calls = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
          Lifecycle l = i % 2 == 0 ? lifecycle : other.lifecycle;
          calls.add(
              pool.submit(
                  () -> {
                    go.await();
                    return l.changes().create("p-race", request, graph).get();
                  }));
        }
        go.countDown();
        List<ChangeCreated> results = new ArrayList<>();
        for (Future<ChangeCreated> c : calls) {
          results.add(c.get());
        }
        pool.shutdown();
        assertThat(results.stream().filter(ChangeCreated::created)).hasSize(1);
        assertThat(results.stream().map(r -> r.change().changeId()).collect(Collectors.toSet()))
            .hasSize(1);
      }
    }
    assertThat(f.count("SELECT COUNT(*) FROM changes WHERE project_id = 'p-race'")).isEqualTo(5);
    assertThat(f.count("SELECT COUNT(*) FROM tasks WHERE project_id = 'p-race'")).isEqualTo(10);
    assertThat(f.outbox("change.created")).isEqualTo(5);
  }

  @DatabaseTest
  void dispatchReadiesRootsAdmitsAtMostEightAgentsAndAssignsOnce() throws Exception {
    f.project("p1");
    List<TaskSpec> tasks = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      tasks.add(task("r" + i));
    }
    tasks.add(task("leaf", "r0"));
    String c =
        lifecycle.changes().create("p1", "req", new WorkGraph(tasks)).get().change().changeId();
    Dispatched d = lifecycle.changes().dispatch(c, "cmd_d1").get();
    assertThat(d.readied()).isEqualTo(10);
    assertThat(d.admitted()).isEqualTo(8);
    assertThat(d.wakes()).hasSize(8);
    assertThat(d.wakes().get(0).command(f.clock.instant()).commandId())
        .isEqualTo("cmd_" + c + ":r0_ready");
    Dispatched again = lifecycle.changes().dispatch(c, "cmd_d2").get();
    assertThat(again.readied()).isZero();
    assertThat(again.admitted()).isZero();
    assertThat(again.wakes()).isEqualTo(d.wakes()); // the same wakes, which the queue drops
    assertThat(f.outbox("task.ready")).isEqualTo(10);
    assertThat(f.outbox("task.assigned")).isEqualTo(8);
    assertThat(f.count("SELECT COUNT(*) FROM tasks WHERE change_id = ? AND state = 'ready'", c))
        .isEqualTo(2);
    assertThat(lifecycle.changes().task(c + ":leaf").orElseThrow().state()).isEqualTo("pending");
  }

  /** Runs the Agent's whole attempt on {@code w}: running, changeset, completed. */
  private void complete(Wake w) throws Exception {
    lifecycle.agents().start(w.task()).get();
    lifecycle.agents().proposeChangeset(w.task()).get();
    lifecycle.agents().complete(w.task()).get();
  }

  /**
   * The seed's agent slots: task.completed and task.failed free a slot; a ready Task waiting at the
   * 8-agent limit gets it when the router dispatches again (after task.completed) or settles (after
   * task.failed).
   */
  @DatabaseTest
  void aCompletedOrFailedTaskFreesItsSlotForAReadyTaskWaitingAtTheLimit() throws Exception {
    f.project("p1");
    List<TaskSpec> tasks = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      tasks.add(task("r" + i));
    }
    String c =
        lifecycle.changes().create("p1", "req", new WorkGraph(tasks)).get().change().changeId();
    List<Wake> first = lifecycle.changes().dispatch(c, "cmd_d1").get().wakes();
    assertThat(first).extracting(Wake::taskId).doesNotContain(c + ":r8", c + ":r9");

    complete(first.get(0));
    Dispatched afterCompleted = lifecycle.changes().dispatch(c, "cmd_completed_dispatch").get();
    assertThat(afterCompleted.admitted()).isEqualTo(1);
    assertThat(lifecycle.changes().task(c + ":r8").orElseThrow().state()).isEqualTo("assigned");

    Wake r1 = first.get(1);
    lifecycle.agents().start(r1.task()).get();
    lifecycle.agents().fail(r1.task(), "broken").get();
    Settled settled = lifecycle.ends().settle(c, "cmd_failed_settle").get();
    // Ready Tasks are admitted in work-graph order: r1's next attempt before r9.
    assertThat(settled.dispatched().admitted()).isEqualTo(1);
    TaskInfo retried = lifecycle.changes().task(c + ":r1").orElseThrow();
    assertThat(retried.state()).isEqualTo("assigned");
    assertThat(retried.attempt()).isEqualTo(2);
    assertThat(lifecycle.changes().task(c + ":r9").orElseThrow().state())
        .as("still waiting at the limit")
        .isEqualTo("ready");
    assertThat(f.count("SELECT COUNT(*) FROM tasks WHERE change_id = ? AND state = 'assigned'", c))
        .isEqualTo(8);

    complete(first.get(2));
    lifecycle.changes().dispatch(c, "cmd_completed2_dispatch").get();
    assertThat(lifecycle.changes().task(c + ":r9").orElseThrow().state()).isEqualTo("assigned");
  }

  @DatabaseTest
  void aCompletedTaskFreesItsSlotAndReadiesItsDependentsThenTheChangeVerifies() throws Exception {
    f.project("p1");
    String c =
        lifecycle
            .changes()
            .create("p1", "req", WorkGraph.of(task("a"), task("b", "a"), task("c", "a", "b")))
            .get()
            .change()
            .changeId();
    Wake a = lifecycle.changes().dispatch(c, "cmd_1").get().wakes().get(0);
    complete(a);
    complete(a); // a repeated report by the same Agent writes nothing
    assertThat(f.outbox("task.completed")).isEqualTo(1);
    Dispatched d = lifecycle.changes().dispatch(c, "cmd_2").get();
    assertThat(d.wakes()).extracting(Wake::taskId).containsExactly(c + ":b");
    complete(d.wakes().get(0));
    Dispatched last = lifecycle.changes().dispatch(c, "cmd_3").get();
    complete(last.wakes().get(0));
    Dispatched done = lifecycle.changes().dispatch(c, "cmd_4").get();
    assertThat(done.verification()).isTrue();
    assertThat(lifecycle.changes().change(c).orElseThrow().state()).isEqualTo("verifying");
    assertThat(f.outbox("verification.started")).isEqualTo(1);
    assertThat(lifecycle.changes().dispatch(c, "cmd_5").get().changeState()).isEqualTo("verifying");
    assertThat(f.outbox("verification.started")).isEqualTo(1);
  }

  @DatabaseTest
  void anAgentThatDoesNotHoldTheTaskIsRefusedAndNothingIsWritten() throws Exception {
    f.project("p1");
    String c =
        lifecycle.changes().create("p1", "req", WorkGraph.of(task("a"))).get().change().changeId();
    Wake w = lifecycle.changes().dispatch(c, "cmd_1").get().wakes().get(0);
    long before = f.count("SELECT COUNT(*) FROM outbox");
    TaskRef stranger = new TaskRef("p1", c, w.taskId(), "agt_other", w.attempt());
    TaskRef lateAttempt = new TaskRef("p1", c, w.taskId(), w.agentId(), w.attempt() + 1);
    for (TaskRef ref : List.of(stranger, lateAttempt)) {
      assertThatThrownBy(() -> lifecycle.agents().start(ref).get())
          .hasCauseInstanceOf(TaskNotHeldException.class);
      assertThatThrownBy(() -> lifecycle.agents().complete(ref).get())
          .hasCauseInstanceOf(TaskNotHeldException.class);
      assertThatThrownBy(() -> lifecycle.agents().acquireClaim(ref, "path:src/a/").get())
          .hasCauseInstanceOf(TaskNotHeldException.class);
    }
    // Not running yet: the holder itself cannot claim or complete before it starts.
    assertThatThrownBy(() -> lifecycle.agents().complete(w.task()).get())
        .hasCauseInstanceOf(TaskNotHeldException.class)
        .hasMessageContaining("the task is assigned");
    assertThat(f.count("SELECT COUNT(*) FROM outbox")).isEqualTo(before);
    assertThat(f.count("SELECT COUNT(*) FROM claims")).isZero();
  }

  @DatabaseTest
  void aFailedTaskRunsAgainUntilItsLastAttemptThenTheChangeFails() throws Exception {
    f.project("p1");
    String c =
        lifecycle
            .changes()
            .create("p1", "req", WorkGraph.of(task("a"), task("b")))
            .get()
            .change()
            .changeId();
    Set<String> agents = new java.util.HashSet<>();
    Wake w = lifecycle.changes().dispatch(c, "cmd_0").get().wakes().get(0);
    for (int attempt = 1; attempt <= 3; attempt++) {
      assertThat(w.attempt()).isEqualTo(attempt);
      agents.add(w.agentId());
      lifecycle.agents().start(w.task()).get();
      lifecycle.agents().fail(w.task(), "boom " + attempt).get();
      Settled s = lifecycle.ends().settle(c, "cmd_s" + attempt).get();
      if (attempt < 3) {
        assertThat(s.decision()).isEqualTo(Settled.Decision.DISPATCHED);
        w =
            s.dispatched().wakes().stream()
                .filter(x -> x.taskId().equals(c + ":a"))
                .findFirst()
                .orElseThrow();
      } else {
        assertThat(s.decision()).isEqualTo(Settled.Decision.FAILED);
        assertThat(s.reason()).contains(c + ":a").contains("attempt 3 of 3").contains("boom 3");
      }
    }
    assertThat(agents).hasSize(3); // each attempt its own Agent
    ChangeInfo failed = lifecycle.changes().change(c).orElseThrow();
    assertThat(failed.state()).isEqualTo("failed");
    assertThat(failed.reason()).contains(c + ":a");
    assertThat(f.outbox("change.failed")).isEqualTo(1);
    assertThat(lifecycle.ends().settle(c, "cmd_again").get().decision())
        .isEqualTo(Settled.Decision.NOTHING);
    assertThat(f.outbox("task.ready")).isEqualTo(2 + 2); // a: attempts 1-3, b: 1
  }

  @DatabaseTest
  void aHeldClaimExpiresByTheShardsAlarmOnceWithClaimExpired() throws Exception {
    f.project("p1");
    String c =
        lifecycle.changes().create("p1", "req", WorkGraph.of(task("a"))).get().change().changeId();
    Wake w = lifecycle.changes().dispatch(c, "cmd_1").get().wakes().get(0);
    lifecycle.agents().start(w.task()).get();
    lifecycle.agents().declareIntent(w.task(), "path:src/a/").get();
    lifecycle.agents().declareIntent(w.task(), "path:src/a/").get();
    lifecycle.agents().acquireClaim(w.task(), "path:src/a/").get();
    lifecycle.agents().acquireClaim(w.task(), "path:src/a/").get();
    assertThat(f.outbox("intent.declared")).isEqualTo(1);
    assertThat(f.outbox("claim.acquired")).isEqualTo(1);
    f.clock.advance(Duration.ofMinutes(9));
    f.coordinator.runtime().fireDueAlarms();
    assertThat(f.outbox("claim.expired")).isZero();
    f.clock.advance(Duration.ofMinutes(2)); // past agents.claim-ttl (10 min)
    f.coordinator.runtime().fireDueAlarms();
    assertThat(f.outbox("claim.expired")).isEqualTo(1);
    assertThat(f.count("SELECT COUNT(*) FROM claims WHERE state = 'expired'")).isEqualTo(1);
    f.clock.advance(Duration.ofMinutes(2));
    f.coordinator.runtime().fireDueAlarms();
    lifecycle.agents().releaseClaim(w.task(), "path:src/a/").get(); // expired: nothing to release
    assertThat(f.outbox("claim.expired")).isEqualTo(1);
    assertThat(f.outbox("claim.released")).isZero();
    // The claim's Event went to the shard of its key, with the key as its resource.
    assertThat(
            f.count(
                "SELECT COUNT(*) FROM outbox WHERE event_type = 'claim.expired' AND actor_id = ?",
                org.rhumbatron.coordinator.shard.ResourceShardActor.actorId(
                    "p1",
                    org.rhumbatron.coordinator.shard.ChangeEvents.shardOf(
                        "path:src/a/",
                        f.settings.get(org.rhumbatron.platform.config.Settings.SHARD_COUNT)))))
        .isEqualTo(1);
  }

  @DatabaseTest
  void cancelEndsAnOpenChangeOnceAndRefusesAnEndedOne() throws Exception {
    f.project("p1");
    String c =
        lifecycle.changes().create("p1", "req", WorkGraph.of(task("a"))).get().change().changeId();
    assertThat(lifecycle.ends().cancel(c).get()).isTrue();
    assertThat(lifecycle.ends().cancel(c).get()).isFalse();
    assertThat(f.outbox("change.cancelled")).isEqualTo(1);
    assertThat(lifecycle.changes().dispatch(c, "cmd_1").get().wakes()).isEmpty();
    String d =
        lifecycle
            .changes()
            .create("p1", "req-2", WorkGraph.of(task("a")))
            .get()
            .change()
            .changeId();
    lifecycle
        .ends()
        .endChange(
            d, ChangeState.FAILED, org.rhumbatron.protocol.EventType.CHANGE_FAILED, "x", null)
        .get();
    assertThatThrownBy(() -> lifecycle.ends().cancel(d).get())
        .hasCauseInstanceOf(LifecycleException.class)
        .hasMessageContaining("is failed");
    assertThatThrownBy(() -> lifecycle.ends().cancel("chg_none").get())
        .hasCauseInstanceOf(LifecycleException.class)
        .hasMessageContaining("unknown change chg_none");
  }

  @DatabaseTest
  void projectFlagsChangeOnceEachAndOnlyAnActiveProjectTakesAnApp() throws Exception {
    f.project("p1");
    assertThat(lifecycle.projects().setLiveApp("p1", true, "cmd_a").get()).isTrue();
    assertThat(lifecycle.projects().setLiveApp("p1", true, "cmd_b").get()).isFalse();
    assertThat(lifecycle.projects().project("p1").orElseThrow().hasLiveApp()).isTrue();
    assertThat(lifecycle.projects().setLiveApp("p1", false, "cmd_c").get()).isTrue();
    assertThat(lifecycle.projects().delete("p1").get()).isTrue();
    assertThat(lifecycle.projects().delete("p1").get()).isFalse();
    assertThatThrownBy(() -> lifecycle.projects().setLiveApp("p1", true, "cmd_d").get())
        .hasCauseInstanceOf(LifecycleException.class)
        .hasMessageContaining("is deleted");
    assertThat(f.outboxTypes())
        .containsExactly("project.created", "app.provisioned", "app.removed", "project.deleted");
    assertThatThrownBy(() -> lifecycle.projects().archive("p-none").get())
        .isInstanceOf(ExecutionException.class)
        .hasMessageContaining("unknown project p-none");
  }
}
