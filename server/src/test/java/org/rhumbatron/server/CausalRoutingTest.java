package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.lifecycle.changes.WorkGraph.TaskSpec;
import org.rhumbatron.lifecycle.tasks.TaskInfo;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * Causal routing in core, end to end: three Changes whose Agents work at the same time on
 * overlapping and separate scopes. The Agents whose scopes overlap another's are woken by the
 * router (exact: at once; prefix: through Clef-flash, which wakes without an API key), the others
 * never are, and every wake ends once: as {@code agent.woken}, or as a false wakeup of a Task
 * attempt that had ended by then.
 *
 * <p>The test is the Agents (on the webhook): it holds every Task until all five were handed out
 * and have declared their intents, and until each overlapping Task was woken, so which Agents are
 * active together does not depend on timing.
 */
class CausalRoutingTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String P = "p-overlap";

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @TempDir Path data;

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  private static TaskSpec task(String key, String scope) {
    return new TaskSpec(key, "edit " + scope, List.of(), List.of(scope));
  }

  /** The Agents' webhook endpoint: it accepts every POST and keeps its body. */
  static final class Webhooks implements AutoCloseable {
    final LocalAgent endpoint;
    final List<JsonNode> bodies = new CopyOnWriteArrayList<>();

    Webhooks() throws Exception {
      endpoint =
          new LocalAgent(
              exchange -> {
                bodies.add(JSON.readTree(exchange.getRequestBody()));
                LocalAgent.answer(exchange, 202);
              });
    }

    String url() {
      return endpoint.url();
    }

    List<TaskRef> started() {
      return bodies.stream()
          .filter(b -> "start".equals(b.path("kind").asText()))
          .map(
              b ->
                  new TaskRef(
                      b.path("projectId").asText(),
                      b.path("changeId").asText(),
                      b.path("taskId").asText(),
                      b.path("agentId").asText(),
                      b.path("attempt").asInt()))
          .distinct()
          .toList();
    }

    Set<String> wokenTasks() {
      Set<String> tasks = new HashSet<>();
      for (JsonNode b : bodies) {
        if ("woken".equals(b.path("kind").asText())) {
          tasks.add(b.path("taskId").asText());
        }
      }
      return tasks;
    }

    @Override
    public void close() {
      endpoint.close();
    }
  }

  private static void each(List<TaskRef> tasks, Function<TaskRef, CompletableFuture<?>> step)
      throws Exception {
    for (TaskRef t : tasks) {
      step.apply(t).get(30, TimeUnit.SECONDS);
    }
  }

  @DatabaseTest
  void agentsOnOverlappingScopesAreWokenAndTheOthersAreNot() throws Exception {
    try (Webhooks agents = new Webhooks()) {
      Settings settings =
          Settings.defaults()
              .with(
                  Map.of(
                      "agents.runtime", "webhook",
                      "agents.webhook.url", agents.url(),
                      "causal.clef-flash-api-key-env", "RHUMBATRON_TEST_NO_SUCH_KEY"));
      try (CoreService core =
          CoreService.start(new CoreConfig(nats.url(), data, db().url(), 0, settings))) {
        route(core, agents);
      }
    }
  }

  private void route(CoreService core, Webhooks agents) throws Exception {
    Lifecycle lifecycle = core.lifecycle();
    LifecycleSteps.provision(lifecycle, P);
    Map<String, WorkGraph> graphs =
        Map.of(
            "x", WorkGraph.of(task("x-api", "path:src/api/"), task("x-lib", "path:lib/")),
            "y", WorkGraph.of(task("y-api", "path:src/api/"), task("y-docs", "path:docs/")),
            "z", WorkGraph.of(task("z-src", "path:src/")));
    List<String> changes = new ArrayList<>();
    for (var g : graphs.entrySet()) {
      changes.add(
          lifecycle.changes().create(P, g.getKey(), g.getValue()).get().change().changeId());
    }
    await().atMost(Duration.ofSeconds(60)).until(() -> agents.started().size() == 5);
    Map<String, String> keyOfTask = new HashMap<>();
    for (String changeId : changes) {
      for (TaskInfo t : lifecycle.changes().tasks(changeId)) {
        keyOfTask.put(t.taskId(), t.key());
      }
    }
    List<TaskRef> held = agents.started();
    Map<String, List<String>> scopes = new HashMap<>();
    for (TaskRef t : held) {
      scopes.put(t.taskId(), lifecycle.changes().task(t.taskId()).orElseThrow().resourceScopes());
    }
    each(held, lifecycle.agents()::start);
    each(
        held,
        t ->
            CompletableFuture.allOf(
                scopes.get(t.taskId()).stream()
                    .map(k -> lifecycle.agents().declareIntent(t, k))
                    .toArray(CompletableFuture[]::new)));
    // Every overlapping Agent is woken while all five still hold their Tasks.
    Set<String> overlapping = Set.of("x-api", "y-api", "z-src");
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                agents.wokenTasks().stream()
                    .map(keyOfTask::get)
                    .collect(Collectors.toSet())
                    .containsAll(overlapping));
    each(held, lifecycle.agents()::proposeChangeset);
    each(held, lifecycle.agents()::complete);
    for (String changeId : changes) {
      LifecycleSteps.awaitState(lifecycle, changeId, "awaiting_approval", 60);
    }

    // Every causal wake ended once: agent.woken, or a false wakeup.
    List<Event> events = new ArrayList<>();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              events.clear();
              events.addAll(StreamReader.events(core.nats(), P));
              return events.stream()
                      .filter(e -> e.eventType() == EventType.VERIFICATION_STARTED)
                      .count()
                  == 3;
            });
    Map<String, String> wokenTask = new HashMap<>(); // causal wake command → task key
    for (Event e : events) {
      String commandId = e.payload().path("commandId").asText("");
      if (e.eventType() == EventType.AGENT_WOKEN && commandId.startsWith("cmd_evt_")) {
        assertThat(wokenTask.put(commandId, keyOfTask.get(e.taskId()))).isNull();
      }
    }
    List<String> falseWakeups =
        core.database()
            .read(
                tx ->
                    tx.query(
                        "SELECT labels, recorded_at_ms FROM platform_metrics"
                            + " WHERE binding = 'METRICS' AND name = 'false_wakeup'",
                        rs -> rs.getString(1) + "\t" + rs.getLong(2)));
    Map<String, Long> completedAt = new HashMap<>();
    for (Event e : events) {
      if (e.eventType() == EventType.TASK_COMPLETED) {
        completedAt.put(e.taskId(), e.timestamp().toEpochMilli());
      }
    }
    Map<String, String> falseTask = new HashMap<>();
    for (String row : falseWakeups) {
      JsonNode labels = JSON.readTree(row.split("\t")[0]);
      long recordedAt = Long.parseLong(row.split("\t")[1]);
      String commandId = labels.path("commandId").asText();
      assertThat(wokenTask).doesNotContainKey(commandId);
      assertThat(falseTask.put(commandId, keyOfTask.get(labels.path("taskId").asText()))).isNull();
      // A false wakeup is one whose Task attempt had ended: completed before the wake came.
      assertThat(completedAt.get(labels.path("taskId").asText()))
          .as("false wakeup %s: %s", labels.path("commandId"), labels.path("reason"))
          .isNotNull()
          .isLessThanOrEqualTo(recordedAt);
    }
    Set<String> wakedTasks = new HashSet<>(wokenTask.values());
    wakedTasks.addAll(falseTask.values());

    assertThat(wakedTasks).contains("x-api", "y-api", "z-src").doesNotContain("x-lib", "y-docs");
    // z-src overlaps x-api and y-api by prefix only: Clef-flash decided, with no key configured.
    List<Event> routed =
        events.stream().filter(e -> e.eventType() == EventType.MODEL_ROUTED).toList();
    assertThat(routed).isNotEmpty();
    assertThat(routed)
        .allSatisfy(
            e -> {
              assertThat(e.payload().path("decision").asText()).isEqualTo("wake");
              assertThat(e.payload().path("reason").asText()).isEqualTo("no_api_key");
              assertThat(
                      Set.of(
                          e.payload().path("eventKey").asText(),
                          e.payload().path("agentKey").asText()))
                  .contains("path:src/");
            });
  }
}
