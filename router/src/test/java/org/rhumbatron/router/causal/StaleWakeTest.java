package org.rhumbatron.router.causal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.lifecycle.LifecycleIds;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.lifecycle.changes.WorkGraph.TaskSpec;
import org.rhumbatron.lifecycle.tasks.TaskInfo;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * The wakes the router does not send because it can tell they are stale or repeats: a Task that
 * ended or whose Change ended after the overlap was found, and an overlap wake of a Task attempt
 * whose earlier wake no consumer handled yet. The seed's rules stay: canonical.advanced wakes every
 * active Agent.
 */
class StaleWakeTest {
  @RegisterExtension static final NatsServerExtension nats = new NatsServerExtension();

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  private CausalFixture c;
  private CausalRules rules;

  @BeforeEach
  void start() throws Exception {
    c = new CausalFixture(nats.url(), db().url(), Map.of());
    rules = c.rules((e, m) -> null, c.cap(1_000));
  }

  @AfterEach
  void close() {
    c.close();
  }

  private Event onApi(EventType type) {
    return c.resourceEvent(type, "path:src/api/", "other");
  }

  private List<String> routed(Event... events) {
    c.sent.clear();
    c.route(rules, List.of(events));
    return c.sentAsText();
  }

  @DatabaseTest
  void aTaskThatCompletedAfterItsOverlapWasFoundIsNotWoken() throws Exception {
    Event e = onApi(EventType.INTENT_DECLARED);
    CausalBatchRouter batch = rules.prepare(List.of(e)); // the overlap with api is found here
    TaskInfo api = c.tasks.get("api");
    c.f.lifecycle.agents().start(CausalFixture.ref(api)).get();
    c.f.lifecycle.agents().complete(CausalFixture.ref(api)).get();
    c.f.database.inTransaction(
        tx -> {
          batch.routeCausalBatch(tx, List.of(e));
          return null;
        });
    assertThat(c.sentAsText()).doesNotContain("agent.wake api");
  }

  @DatabaseTest
  void noAgentOfAChangeThatEndedIsWoken() throws Exception {
    Event e = onApi(EventType.CLAIM_RELEASED);
    CausalBatchRouter batch = rules.prepare(List.of(e));
    c.f.lifecycle.ends().cancel(c.changeA.changeId()).get();
    c.f.database.inTransaction(
        tx -> {
          batch.routeCausalBatch(tx, List.of(e));
          return null;
        });
    assertThat(c.sentAsText()).isEmpty();
  }

  @DatabaseTest
  void anOverlapWakeWaitsWhileTheTaskAttemptsLastWakeIsUnhandled() throws Exception {
    assertThat(routed(onApi(EventType.INTENT_DECLARED))).containsExactly("agent.wake api");
    Command first = c.sent.get(0);
    assertThat(routed(onApi(EventType.CLAIM_RELEASED)))
        .as("the first wake still waits in the queue")
        .isEmpty();
    assertThat(routed(c.resourceEvent(EventType.INTENT_DECLARED, "path:src/ui/", "other")))
        .as("another Task attempt is not held back")
        .containsExactly("agent.wake ui");

    c.f
        .lifecycle
        .agents()
        .agentWoken(CausalFixture.ref(c.tasks.get("api")), first.commandId())
        .get();
    assertThat(routed(onApi(EventType.CHANGESET_PROPOSED)))
        .as("handled: the next Event wakes the Agent again")
        .containsExactly("agent.wake api");

    assertThat(routed(onApi(EventType.INTENT_CHANGED))).isEmpty();
    c.f.clock.advance(
        c.f
            .settings
            .get(org.rhumbatron.platform.config.Settings.WAKE_PENDING_WINDOW)
            .plus(Duration.ofSeconds(1)));
    assertThat(routed(onApi(EventType.CLAIM_EXPIRED)))
        .as("a wake unhandled past the window no longer holds the next back")
        .containsExactly("agent.wake api");
  }

  @DatabaseTest
  void anAssignedTaskWhoseDispatcherWakeIsUnhandledIsNotWokenByAnOverlap() throws Exception {
    String changeC =
        c.f
            .lifecycle
            .changes()
            .create(
                CausalFixture.P,
                "c",
                WorkGraph.of(
                    new TaskSpec("api2", "edit api2", List.of(), List.of("path:src/api/"))))
            .get()
            .change()
            .changeId();
    c.f.lifecycle.changes().dispatch(changeC, null).get();
    TaskInfo api2 = c.f.lifecycle.changes().tasks(changeC).get(0);
    assertThat(api2.state()).isEqualTo("assigned");
    c.tasks.put("api2", api2);

    assertThat(routed(onApi(EventType.INTENT_DECLARED)))
        .as("api2's Agent starts after this Event: its dispatcher wake is still queued")
        .containsExactly("agent.wake api");

    c.f
        .lifecycle
        .agents()
        .agentWoken(CausalFixture.ref(api2), LifecycleIds.readyWake(api2.taskId(), api2.attempt()))
        .get();
    assertThat(routed(onApi(EventType.CLAIM_RELEASED))).containsExactly("agent.wake api2");
  }

  @DatabaseTest
  void anAttemptThatProposedItsChangesetIsNotWokenByAnOverlap() throws Exception {
    TaskInfo api = c.tasks.get("api");
    c.f.lifecycle.agents().start(CausalFixture.ref(api)).get();
    c.f.lifecycle.agents().proposeChangeset(CausalFixture.ref(api)).get();
    Event onUi = c.resourceEvent(EventType.CHANGESET_PROPOSED, "path:src/ui/", "other");
    assertThat(routed(onApi(EventType.INTENT_DECLARED)))
        .as("its one changeset is proposed: a wake changes nothing it delivers")
        .isEmpty();
    assertThat(routed(onUi)).containsExactly("agent.wake ui");
  }

  @DatabaseTest
  void canonicalAdvancedStillWakesEveryActiveAgent() throws Exception {
    assertThat(routed(onApi(EventType.INTENT_DECLARED))).containsExactly("agent.wake api");
    Event advanced =
        c.event(EventType.CANONICAL_ADVANCED, null, null, "project:" + CausalFixture.P, null);
    assertThat(routed(advanced))
        .containsExactlyInAnyOrder(
            "candidates.recompose project",
            "index.build project",
            "agent.wake api",
            "agent.wake ui",
            "agent.wake docs",
            "agent.wake other");
  }
}
