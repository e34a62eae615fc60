package org.rhumbatron.agents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.lifecycle.LifecycleFixture;
import org.rhumbatron.lifecycle.changes.Wake;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.lifecycle.changes.WorkGraph.TaskSpec;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.platform.metrics.MetricsBinding;
import org.rhumbatron.platform.metrics.PlatformMetrics;
import org.rhumbatron.platform.queue.Delivery;
import org.rhumbatron.platform.queue.Outcome;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/** The wake consumer and the simulated Agents on a real nats-server and database. */
class WakeConsumerTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  private LifecycleFixture f;
  private final List<TaskRef> handedOut = new CopyOnWriteArrayList<>();
  private WakeConsumer consumer;

  @BeforeEach
  void start() throws Exception {
    f = new LifecycleFixture(nats.url(), db().url(), Map.of());
    consumer =
        new WakeConsumer(
            f.lifecycle,
            handedOut::add,
            new PlatformMetrics(f.database, f.clock, MetricsBinding.METRICS));
    f.project("p1");
  }

  @AfterEach
  void stop() {
    f.close();
  }

  private static Delivery delivery() {
    return new Delivery(Queue.AGENT_WAKEUPS, 1, 1, Instant.EPOCH, null);
  }

  private long falseWakeups() {
    return f.count(
        "SELECT COUNT(*) FROM platform_metrics WHERE binding = 'METRICS' AND name = 'false_wakeup'");
  }

  private Wake admitted(String request, TaskSpec... tasks) throws Exception {
    String c =
        f.lifecycle.changes().create("p1", request, WorkGraph.of(tasks)).get().change().changeId();
    return f.lifecycle.changes().dispatch(c, "cmd_dispatch_" + request).get().wakes().get(0);
  }

  private static TaskSpec task(String key) {
    return new TaskSpec(
        key, "task " + key, List.of(), List.of("path:src/" + key + "/", "path:docs/"));
  }

  @DatabaseTest
  void aRelevantWakeWritesAgentWokenAndHandsTheTaskToTheRuntimeOnce() throws Exception {
    Wake w = admitted("r1", task("a"));
    Command wake = w.command(f.clock.instant());
    assertThat(consumer.handle(wake, delivery())).isInstanceOf(Outcome.Ack.class);
    assertThat(handedOut).containsExactly(w.task());
    assertThat(consumer.handle(wake, delivery())).isInstanceOf(Outcome.Ack.class); // redelivered
    assertThat(f.outbox("agent.woken")).isEqualTo(1);
    f.lifecycle.agents().start(w.task()).get();
    // A ready wake for a Task the same Agent already runs is a duplicate, not a false wakeup.
    assertThat(consumer.handle(wake, delivery())).isInstanceOf(Outcome.Ack.class);
    assertThat(handedOut).hasSize(2); // the runtime itself drops the repeat of one attempt
    assertThat(falseWakeups()).isZero();
  }

  @DatabaseTest
  void aWakeForACancelledChangeIsStaleCountsOneFalseWakeupAndDoesNothing() throws Exception {
    Wake w = admitted("r1", task("a"));
    f.lifecycle.ends().cancel(w.changeId()).get();
    long outbox = f.count("SELECT COUNT(*) FROM outbox");
    assertThat(consumer.handle(w.command(f.clock.instant()), delivery()))
        .isInstanceOf(Outcome.Ack.class);
    assertThat(handedOut).isEmpty();
    assertThat(falseWakeups()).isEqualTo(1);
    assertThat(f.count("SELECT COUNT(*) FROM outbox")).isEqualTo(outbox);
    String labels =
        f.database.read(
            tx ->
                tx.queryFirst(
                        "SELECT labels FROM platform_metrics WHERE name = 'false_wakeup'",
                        rs -> rs.getString(1))
                    .orElseThrow());
    assertThat(labels).contains("is cancelled").contains("\"reason\":\"change_ended\"");
  }

  @DatabaseTest
  void aWakeOfAnEarlierAttemptIsStaleAfterTheTaskWasReassigned() throws Exception {
    Wake first = admitted("r1", task("a"));
    f.lifecycle.agents().start(first.task()).get();
    f.lifecycle.agents().fail(first.task(), "boom").get();
    Wake second =
        f.lifecycle.ends().settle(first.changeId(), "cmd_settle").get().dispatched().wakes().get(0);
    assertThat(second.agentId()).isNotEqualTo(first.agentId());
    long outbox = f.count("SELECT COUNT(*) FROM outbox");
    assertThat(consumer.handle(first.command(f.clock.instant()), delivery()))
        .isInstanceOf(Outcome.Ack.class);
    assertThat(falseWakeups()).isEqualTo(1);
    assertThat(handedOut).isEmpty();
    assertThat(f.count("SELECT COUNT(*) FROM outbox")).isEqualTo(outbox);
    assertThat(consumer.handle(second.command(f.clock.instant()), delivery()))
        .isInstanceOf(Outcome.Ack.class);
    assertThat(handedOut).containsExactly(second.task());
    assertThat(falseWakeups()).isEqualTo(1);
  }

  @DatabaseTest
  void aWakeWithoutItsFieldsOrForAnUnknownTaskIsRejected() throws Exception {
    Wake w = admitted("r1", task("a"));
    Command noAgent =
        Command.builder()
            .commandId("cmd_x")
            .commandType(org.rhumbatron.protocol.CommandType.AGENT_WAKE)
            .projectId("p1")
            .changeId(w.changeId())
            .taskId(w.taskId())
            .createdAt(f.clock.instant())
            .build();
    assertThat(consumer.handle(noAgent, delivery())).isInstanceOf(Outcome.Reject.class);
    Command unknown =
        new Wake("p1", w.changeId(), "chg_x:nope", "agt_1", 1).command(f.clock.instant());
    assertThat(consumer.handle(unknown, delivery()))
        .isEqualTo(Outcome.reject("agent.wake cmd_chg_x:nope_ready: unknown task chg_x:nope"));
  }

  @DatabaseTest
  void aSimulatedAgentRunsEveryStepThroughItsShardsAndCompletes() throws Exception {
    Wake w = admitted("r1", task("a"));
    try (SimulatedAgentRuntime agents =
        new SimulatedAgentRuntime(
            f.lifecycle, f.settings.with(Map.of("agents.simulated.step-delay", "0ms")))) {
      agents.start(w.task());
      agents.start(w.task()); // the same attempt again: one run
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  f.lifecycle.changes().task(w.taskId()).orElseThrow().state().equals("completed"));
    }
    List<String> types =
        f.database.read(
            tx ->
                tx.query(
                    "SELECT event_type FROM outbox WHERE event_type NOT IN"
                        + " ('change.created', 'project.created') ORDER BY seq",
                    rs -> rs.getString(1)));
    assertThat(types)
        .containsExactly(
            "task.ready",
            "task.assigned",
            "task.running",
            "intent.declared",
            "intent.declared",
            "claim.acquired",
            "claim.acquired",
            "changeset.proposed",
            "claim.released",
            "claim.released",
            "task.completed");
    assertThat(f.count("SELECT COUNT(*) FROM claims WHERE state = 'released'")).isEqualTo(2);
    assertThat(f.count("SELECT COUNT(*) FROM changesets")).isEqualTo(1);
  }

  /**
   * The database refuses new claims for longer than three tries (a full disk): the agent keeps
   * trying and completes the Task once writes succeed again.
   */
  @DatabaseTest
  void aSimulatedAgentOutlastsADatabaseOutageAndCompletes() throws Exception {
    Wake w = admitted("r1", task("a"));
    f.refuseInserts("claims", true);
    try (SimulatedAgentRuntime agents =
        new SimulatedAgentRuntime(
            f.lifecycle, f.settings.with(Map.of("agents.simulated.step-delay", "0ms")))) {
      agents.start(w.task());
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () -> f.lifecycle.changes().task(w.taskId()).orElseThrow().state().equals("running"));
      // Past the 1 s + 2 s + 4 s pauses: the fourth try failed too.
      await().atMost(Duration.ofSeconds(20)).until(() -> agents.retriedSteps() >= 4);
      assertThat(f.count("SELECT COUNT(*) FROM claims")).isZero();
      f.refuseInserts("claims", false);
      await()
          .atMost(Duration.ofSeconds(40))
          .until(
              () ->
                  f.lifecycle.changes().task(w.taskId()).orElseThrow().state().equals("completed"));
    }
    assertThat(f.count("SELECT COUNT(*) FROM claims WHERE state = 'released'")).isEqualTo(2);
  }

  @DatabaseTest
  void theSimulatedFailuresDependOnTheSeedTaskAndAttemptOnly() throws Exception {
    var settings = f.settings.with(Map.of("agents.simulated.failure-rate", "0.5"));
    try (SimulatedAgentRuntime one = new SimulatedAgentRuntime(f.lifecycle, settings);
        SimulatedAgentRuntime two = new SimulatedAgentRuntime(f.lifecycle, settings);
        SimulatedAgentRuntime otherSeed =
            new SimulatedAgentRuntime(
                f.lifecycle, settings.with(Map.of("agents.simulated.seed", "2")))) {
      int fails = 0;
      int differ = 0;
      for (int i = 0; i < 200; i++) {
        TaskRef t = new TaskRef("p", "c", "c:t" + i, "agt", 1 + i % 3);
        assertThat(one.fails(t)).isEqualTo(two.fails(t));
        fails += one.fails(t) ? 1 : 0;
        differ += one.fails(t) != otherSeed.fails(t) ? 1 : 0;
      }
      assertThat(fails).isBetween(70, 130); // about half
      assertThat(differ).isGreaterThan(50);
    }
  }
}
