package org.rhumbatron.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.changes.Settled;
import org.rhumbatron.lifecycle.changes.Wake;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.lifecycle.changes.WorkGraph.TaskSpec;
import org.rhumbatron.lifecycle.tasks.TaskInfo;
import org.rhumbatron.lifecycle.tasks.TaskNotHeldException;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * An ended Change leaves nothing running: its Tasks that had not ended are cancelled with the
 * reason in the transaction of its end, the Agents that held them are told to stop, their claims
 * are released, and a late report of a stopped Agent changes nothing. SQLite and PostgreSQL.
 */
class ChangeEndTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  private LifecycleFixture f;
  private Lifecycle lifecycle;
  private final List<String> stops = new CopyOnWriteArrayList<>();

  private void start(Map<String, String> overrides) throws Exception {
    f = new LifecycleFixture(nats.url(), db().url(), overrides);
    lifecycle = f.lifecycle;
    lifecycle.ends().whenTaskStops((task, reason) -> stops.add(task.agentId() + " " + reason));
    f.project("p1");
  }

  @AfterEach
  void stop() {
    if (f != null) {
      f.close();
    }
  }

  private static TaskSpec task(String key, String... deps) {
    return new TaskSpec(
        key, "task " + key, List.of(deps), List.of("path:src/" + key + "/", "path:docs/" + key));
  }

  private String change(String request, TaskSpec... tasks) throws Exception {
    return lifecycle.changes().create("p1", request, WorkGraph.of(tasks)).get().change().changeId();
  }

  /** The Agent runs the Task and claims both its scopes. */
  private void runWithClaims(Wake w) throws Exception {
    lifecycle.agents().start(w.task()).get();
    String key = w.taskId().substring(w.taskId().indexOf(':') + 1);
    lifecycle.agents().acquireClaim(w.task(), "path:src/" + key + "/").get();
    lifecycle.agents().acquireClaim(w.task(), "path:docs/" + key).get();
  }

  private List<Event> outboxEvents(String type) {
    EnvelopeCodec codec = new EnvelopeCodec();
    return f.database.read(
        tx ->
            tx.query(
                "SELECT payload FROM outbox WHERE event_type = ? ORDER BY seq",
                rs -> codec.decodeEvent(rs.getBytes(1)),
                type));
  }

  private long heldClaims(String changeId) {
    return f.count("SELECT COUNT(*) FROM claims WHERE change_id = ? AND state = 'held'", changeId);
  }

  @DatabaseTest
  void aCancelledChangeCancelsItsRunningAndReadyTasksStopsTheAgentAndReleasesItsClaims()
      throws Exception {
    start(Map.of("changes.agents-per-change", "1")); // b stays ready behind a
    String c = change("req", task("a"), task("b"));
    Wake a = lifecycle.changes().dispatch(c, "cmd_1").get().wakes().get(0);
    runWithClaims(a);
    assertThat(lifecycle.changes().task(c + ":b").orElseThrow().state()).isEqualTo("ready");
    assertThat(heldClaims(c)).isEqualTo(2);

    assertThat(lifecycle.ends().cancel(c).get()).isTrue();

    for (String key : List.of("a", "b")) {
      TaskInfo t = lifecycle.changes().task(c + ":" + key).orElseThrow();
      assertThat(t.state()).as(key).isEqualTo("cancelled");
      assertThat(t.endReason()).as(key).isEqualTo("change_cancelled");
    }
    List<Event> cancelled = outboxEvents("task.cancelled");
    assertThat(cancelled).extracting(Event::taskId).containsExactly(c + ":a", c + ":b");
    String changeCancelled = outboxEvents("change.cancelled").get(0).eventId();
    assertThat(cancelled).allMatch(e -> changeCancelled.equals(e.causedBy()));
    assertThat(cancelled)
        .allMatch(e -> "change_cancelled".equals(e.payload().path("reason").asText()));
    assertThat(cancelled.get(0).payload().path("agentId").asText()).isEqualTo(a.agentId());
    assertThat(cancelled.get(0).payload().path("previousState").asText()).isEqualTo("running");
    assertThat(cancelled.get(1).payload().has("agentId")).as("b had no Agent").isFalse();

    assertThat(stops).containsExactly(a.agentId() + " change_cancelled");
    assertThat(heldClaims(c)).isZero();
    assertThat(f.count("SELECT COUNT(*) FROM claims WHERE change_id = ? AND state = 'released'", c))
        .isEqualTo(2);
    assertThat(outboxEvents("claim.released"))
        .extracting(Event::resource)
        .containsExactlyInAnyOrder("path:src/a/", "path:docs/a");
    assertThat(lifecycle.agents().overlapping("p1", List.of("path:src/a/", "path:src/b/"), null))
        .isEmpty();
    assertThat(lifecycle.changes().heldTasks(10)).isEmpty();

    // The stopped Agent reports late: refused, nothing written, the Task stays cancelled.
    long outbox = f.count("SELECT COUNT(*) FROM outbox");
    assertThatThrownBy(() -> lifecycle.agents().complete(a.task()).get())
        .hasCauseInstanceOf(TaskNotHeldException.class)
        .hasMessageContaining("the task was cancelled (change_cancelled)");
    assertThatThrownBy(() -> lifecycle.agents().fail(a.task(), "late").get())
        .hasCauseInstanceOf(TaskNotHeldException.class);
    assertThatThrownBy(() -> lifecycle.agents().start(a.task()).get())
        .hasCauseInstanceOf(TaskNotHeldException.class);
    assertThatThrownBy(() -> lifecycle.agents().acquireClaim(a.task(), "path:src/a/x").get())
        .hasCauseInstanceOf(TaskNotHeldException.class)
        .hasMessageContaining("cancelled");
    assertThat(lifecycle.changes().task(c + ":a").orElseThrow().state()).isEqualTo("cancelled");
    assertThat(f.count("SELECT COUNT(*) FROM outbox")).isEqualTo(outbox);

    // A repeated cancel writes nothing and stops nothing again.
    assertThat(lifecycle.ends().cancel(c).get()).isFalse();
    assertThat(f.count("SELECT COUNT(*) FROM outbox")).isEqualTo(outbox);
    assertThat(stops).hasSize(1);
  }

  @DatabaseTest
  void aChangeThatFailsCancelsItsRunningAndPendingTasksWithChangeFailed() throws Exception {
    start(Map.of("changes.task-attempts", "1"));
    String c = change("req", task("a"), task("b"), task("c", "a"));
    List<Wake> wakes = lifecycle.changes().dispatch(c, "cmd_1").get().wakes();
    Wake a = wakes.get(0);
    Wake b = wakes.get(1);
    assertThat(b.taskId()).isEqualTo(c + ":b");
    lifecycle.agents().start(a.task()).get();
    runWithClaims(b);
    lifecycle.agents().fail(a.task(), "boom").get();

    Settled settled = lifecycle.ends().settle(c, "cmd_failed_settle").get();

    assertThat(settled.decision()).isEqualTo(Settled.Decision.FAILED);
    assertThat(lifecycle.changes().change(c).orElseThrow().state()).isEqualTo("failed");
    TaskInfo failed = lifecycle.changes().task(c + ":a").orElseThrow();
    assertThat(failed.state()).as("ended on its own").isEqualTo("failed");
    assertThat(failed.endReason()).isNull();
    for (String key : List.of("b", "c")) {
      TaskInfo t = lifecycle.changes().task(c + ":" + key).orElseThrow();
      assertThat(t.state()).as(key).isEqualTo("cancelled");
      assertThat(t.endReason()).as(key).isEqualTo("change_failed");
    }
    assertThat(outboxEvents("task.cancelled"))
        .extracting(Event::taskId)
        .containsExactly(c + ":b", c + ":c");
    assertThat(stops).containsExactly(b.agentId() + " change_failed");
    assertThat(heldClaims(c)).isZero();
    assertThat(f.outbox("claim.released")).isEqualTo(2);
    assertThatThrownBy(() -> lifecycle.agents().complete(b.task()).get())
        .hasCauseInstanceOf(TaskNotHeldException.class)
        .hasMessageContaining("change_failed");
  }

  @DatabaseTest
  void everyEndOfAChangeNamesItselfInTheReasonOfItsCancelledTasks() throws Exception {
    start(Map.of());
    String c = change("req", task("a"));
    Wake a = lifecycle.changes().dispatch(c, "cmd_1").get().wakes().get(0);
    assertThat(
            lifecycle
                .ends()
                .endChange(
                    c,
                    ChangeState.NOT_SELECTED,
                    EventType.CHANGE_NOT_SELECTED,
                    "sibling promoted",
                    "x")
                .get())
        .isTrue();
    TaskInfo t = lifecycle.changes().task(a.taskId()).orElseThrow();
    assertThat(t.state()).isEqualTo("cancelled");
    assertThat(t.endReason()).isEqualTo("change_not_selected");
    assertThat(stops).containsExactly(a.agentId() + " change_not_selected");
  }
}
