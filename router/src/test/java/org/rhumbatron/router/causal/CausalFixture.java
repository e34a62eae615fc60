package org.rhumbatron.router.causal;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import org.rhumbatron.lifecycle.LifecycleFixture;
import org.rhumbatron.lifecycle.LifecycleIds;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.lifecycle.changes.WorkGraph.TaskSpec;
import org.rhumbatron.lifecycle.tasks.TaskInfo;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.metrics.MetricsBinding;
import org.rhumbatron.platform.metrics.PlatformMetrics;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;

/**
 * A project with active Agents on known scopes, for the causal rules: Change {@code A} holds Tasks
 * {@code api} ({@code path:src/api/}), {@code ui} ({@code path:src/ui/}) and {@code docs} ({@code
 * path:docs/readme.md}); Change {@code B} holds {@code other} ({@code path:other/}), the writer of
 * the resource Events the tests route.
 */
final class CausalFixture implements AutoCloseable {
  static final String P = "p1";

  final LifecycleFixture f;
  final List<Command> sent = new CopyOnWriteArrayList<>();
  final Map<String, TaskInfo> tasks = new LinkedHashMap<>(); // by key
  ChangeInfo changeA;
  ChangeInfo changeB;
  volatile Function<Command, CompletableFuture<?>> transport;

  CausalFixture(String natsUrl, String databaseUrl, Map<String, String> overrides)
      throws Exception {
    f = new LifecycleFixture(natsUrl, databaseUrl, overrides);
    transport = f.commands::send;
    f.project(P);
    changeA =
        f.lifecycle
            .changes()
            .create(
                P,
                "a",
                WorkGraph.of(
                    task("api", "path:src/api/"),
                    task("ui", "path:src/ui/"),
                    task("docs", "path:docs/readme.md")))
            .get()
            .change();
    changeB =
        f.lifecycle
            .changes()
            .create(P, "b", WorkGraph.of(task("other", "path:other/")))
            .get()
            .change();
    f.lifecycle.changes().dispatch(changeA.changeId(), null).get();
    f.lifecycle.changes().dispatch(changeB.changeId(), null).get();
    for (ChangeInfo c : List.of(changeA, changeB)) {
      f.lifecycle.changes().tasks(c.changeId()).forEach(t -> tasks.put(t.key(), t));
    }
    // Each Agent got its Task: the dispatcher's wake was handled (agent.woken), as the wake
    // consumer does; until then the router holds overlap wakes back.
    for (TaskInfo t : tasks.values()) {
      f.lifecycle
          .agents()
          .agentWoken(ref(t), LifecycleIds.readyWake(t.taskId(), t.attempt()))
          .get();
    }
  }

  static TaskRef ref(TaskInfo t) {
    return new TaskRef(t.projectId(), t.changeId(), t.taskId(), t.agentId(), t.attempt());
  }

  private static TaskSpec task(String key, String scope) {
    return new TaskSpec(key, "edit " + key, List.of(), List.of(scope));
  }

  CommandCap cap(int perDay) {
    return new CommandCap(
        perDay, f.clock, new PlatformMetrics(f.database, f.clock, MetricsBinding.METRICS));
  }

  CausalRules rules(PrefixOverlapJudge judge, CommandCap cap) {
    return rules(judge, cap, Settings.WAKE_PENDING_WINDOW.defaultValue());
  }

  /** {@code pendingWindow}: zero sends every overlap wake, also while an earlier one waits. */
  CausalRules rules(PrefixOverlapJudge judge, CommandCap cap, Duration pendingWindow) {
    return new CausalRules(
        c -> {
          sent.add(c);
          return transport.apply(c);
        },
        f.clock,
        f.lifecycle,
        judge,
        cap,
        pendingWindow);
  }

  /** A resource Event by the Agent of {@code byTask} (a key of {@link #tasks}) on {@code key}. */
  Event resourceEvent(EventType type, String key, String byTask) {
    TaskInfo by = tasks.get(byTask);
    ObjectNode payload = JsonNodeFactory.instance.objectNode();
    payload.put("agentId", by.agentId());
    payload.put("attempt", by.attempt());
    String resource = key;
    if (type == EventType.CHANGESET_PROPOSED) {
      payload.putArray("resourceKeys").add(key);
    }
    return event(type, by.changeId(), by.taskId(), resource, payload);
  }

  Event event(EventType type, String changeId, String taskId, String resource, ObjectNode p) {
    return Event.builder()
        .eventId(StableIds.randomEventId(f.clock.instant()))
        .eventType(type)
        .tenantId("tenant-1")
        .projectId(P)
        .changeId(changeId)
        .taskId(taskId)
        .actor("test")
        .resource(resource)
        .canonicalGeneration(type == EventType.CANONICAL_ADVANCED ? 1L : null)
        .correlationId(changeId == null ? P : changeId)
        .timestamp(f.clock.instant())
        .payload(p == null ? JsonNodeFactory.instance.objectNode() : p)
        .build();
  }

  /** Routes {@code events} as one fresh batch, prepared first as the subscription does. */
  void route(CausalRules rules, List<Event> events) {
    CausalBatchRouter batch = rules.prepare(events);
    f.database.inTransaction(
        tx -> {
          batch.routeCausalBatch(tx, events);
          return null;
        });
  }

  /** The commands sent, as {@code <type> <task key or change>}. */
  List<String> sentAsText() {
    List<String> out = new ArrayList<>();
    for (Command c : sent) {
      String target =
          c.taskId() != null
              ? tasks.values().stream()
                  .filter(t -> t.taskId().equals(c.taskId()))
                  .map(TaskInfo::key)
                  .findFirst()
                  .orElse(c.taskId())
              : c.changeId() == null
                  ? "project"
                  : c.changeId().equals(changeA.changeId()) ? "A" : "B";
      out.add(c.commandType().wireName() + " " + target);
    }
    return out;
  }

  @Override
  public void close() {
    f.close();
  }
}
