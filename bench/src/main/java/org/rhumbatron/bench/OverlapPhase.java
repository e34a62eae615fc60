package org.rhumbatron.bench;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nats.client.Connection;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.lifecycle.changes.WorkGraph.TaskSpec;
import org.rhumbatron.lifecycle.tasks.TaskInfo;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.platform.queue.JetStreamCommandTransport;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;
import org.rhumbatron.router.causal.AnthropicModelClient;
import org.rhumbatron.router.causal.CausalRules;
import org.rhumbatron.router.causal.ClefFlash;

/**
 * The router bench's resource-overlap phase: one project with {@link #AGENTS} active Agents (25
 * Changes of 8 Tasks, each on its own {@code path:svc<c>/mod<t>/}) and resource Events whose keys
 * are a third exact (one Agent's scope), a third prefix only (a file under one scope: Clef-flash,
 * answered by a local Messages API), a third unrelated. The real causal rules route them.
 */
final class OverlapPhase implements AutoCloseable {
  static final int AGENTS = 200;
  private static final int CHANGES = 25;
  private static final String PROJECT = "p-bench-overlap";

  private final Lifecycle lifecycle;
  private final Clock clock;
  private final LocalModelApi api;
  private final ClefFlash clefFlash;
  private final CausalRules rules;
  private final List<TaskInfo> agents = new ArrayList<>();

  OverlapPhase(Connection nats, Database db, Coordinator coordinator, Clock clock, Settings base)
      throws Exception {
    // Every prefix overlap is answered by the local API: no day's budget cuts the phase short.
    this.clock = clock;
    Settings settings = base.with(Settings.CLEF_FLASH_CALLS_PER_DAY, Integer.MAX_VALUE);
    Commands commands = new Commands(new JetStreamCommandTransport(nats), new EnvelopeCodec());
    lifecycle = new Lifecycle(coordinator, commands, clock, settings);
    api =
        new LocalModelApi(
            AnthropicModelClient.TOOL,
            body ->
                body.hashCode() % 2 == 0
                    ? "{\"decision\":\"wake\",\"probability\":0.9}"
                    : "{\"decision\":\"skip\",\"probability\":0.85}");
    clefFlash =
        new ClefFlash(
            db,
            Optional.of(
                new AnthropicModelClient(
                    api.baseUrl(),
                    "bench-key",
                    settings.get(Settings.CLEF_FLASH_MODEL),
                    Duration.ofSeconds(2))),
            settings,
            clock);
    // No wake consumer runs here, so every wake stays pending: without a zero window each Agent's
    // overlap wakes would be held back as repeats and the phase would route none.
    rules =
        CausalRules.of(
            commands::send,
            clock,
            lifecycle,
            clefFlash,
            db,
            settings.with(Settings.WAKE_PENDING_WINDOW, Duration.ZERO));
  }

  /** The project and its 200 active Agents. */
  void setUp() throws Exception {
    lifecycle.projects().create(PROJECT, "tenant-bench", "Overlap bench").get();
    for (int c = 0; c < CHANGES; c++) {
      List<TaskSpec> tasks = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        tasks.add(
            new TaskSpec("m" + t, "edit svc" + c + "/mod" + t, List.of(), List.of(scope(c, t))));
      }
      String changeId =
          lifecycle
              .changes()
              .create(PROJECT, "overlap-" + c, WorkGraph.of(tasks.toArray(TaskSpec[]::new)))
              .get()
              .change()
              .changeId();
      lifecycle.changes().dispatch(changeId, null).get();
      agents.addAll(lifecycle.changes().tasks(changeId));
    }
    if (agents.stream().filter(TaskInfo::held).count() != AGENTS) {
      throw new IllegalStateException("the overlap phase needs " + AGENTS + " active agents");
    }
  }

  private static String scope(int change, int task) {
    return "path:svc" + change + "/mod" + task + "/";
  }

  CausalRules rules() {
    return rules;
  }

  String projectId() {
    return PROJECT;
  }

  /** Model calls the local API answered. */
  int modelCalls() {
    return api.requests();
  }

  /** {@code n} resource Events, from the {@code from}th: exact, prefix, unrelated in turn. */
  List<Event> events(int n, long from) {
    TaskInfo writer = agents.get(0);
    List<Event> out = new ArrayList<>(n);
    for (long i = from; i < from + n; i++) {
      int agent = (int) (1 + i % (AGENTS - 1)); // never the writer's own
      int c = agent / 8;
      int t = agent % 8;
      String key =
          switch ((int) (i % 3)) {
            case 0 -> scope(c, t);
            case 1 -> scope(c, t) + "File" + i + ".java";
            default -> "path:unrelated/" + i + "/";
          };
      ObjectNode payload = JsonNodeFactory.instance.objectNode();
      payload.put("agentId", writer.agentId());
      payload.put("attempt", writer.attempt());
      out.add(
          Event.builder()
              .eventId(
                  StableIds.stableEventId(
                      writer.changeId(), EventType.INTENT_DECLARED, writer.taskId(), "i" + i))
              .eventType(EventType.INTENT_DECLARED)
              .tenantId("tenant-bench")
              .projectId(PROJECT)
              .changeId(writer.changeId())
              .taskId(writer.taskId())
              .actor(PROJECT + ":0")
              .resource(key)
              .correlationId(writer.changeId())
              .timestamp(clock.instant())
              .payload(payload)
              .build());
    }
    return out;
  }

  @Override
  public void close() {
    clefFlash.close();
    api.close();
  }
}
