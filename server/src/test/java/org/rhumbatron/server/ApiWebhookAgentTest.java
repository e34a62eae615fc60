package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.server.ApiClient.Answer;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * A Change whose Tasks are done by an Agent outside core: core POSTs each relevant wake to the
 * agent's webhook, the agent works through the agent endpoints only, and the Change completes. The
 * webhook answers the first POST of each Task 503 and lets the second time out, so each Task
 * reaches its agent through the queue's retries. A rogue agent's reports are refused with 409.
 */
class ApiWebhookAgentTest {
  static final String TOKEN = "webhook-test-token";

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension db = DatabaseExtension.sqlite();
  @TempDir Path data;

  /** The small HTTP agent: takes a webhook, then reports through the API on its own thread. */
  static final class ExternalAgent implements AutoCloseable {
    final LocalAgent endpoint;
    final List<String> problems;
    final Map<String, AtomicInteger> posts = new ConcurrentHashMap<>();
    final List<String> accepted = new CopyOnWriteArrayList<>();
    final List<Answer> rogue = new CopyOnWriteArrayList<>();

    ExternalAgent() throws Exception {
      endpoint = new LocalAgent(this::wake);
      problems = endpoint.problems;
    }

    String url() {
      return endpoint.url();
    }

    private void wake(HttpExchange exchange) throws java.io.IOException {
      JsonNode task = ApiClient.JSON.readTree(exchange.getRequestBody());
      String key = task.path("taskId").asText() + "#" + task.path("attempt").asInt();
      int n = posts.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
      if (n == 1) {
        LocalAgent.answer(exchange, 503);
        return;
      }
      if (n == 2) {
        try {
          Thread.sleep(1_500); // longer than agents.webhook.timeout: core gives up on this POST
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        LocalAgent.answer(exchange, 503);
        return;
      }
      LocalAgent.answer(exchange, 202);
      if ("start".equals(task.path("kind").asText())) {
        accepted.add(key);
        endpoint.submit(() -> run(task));
      }
    }

    private void run(JsonNode task) throws Exception {
      ApiClient api = new ApiClient(task.path("apiBaseUrl").asText(), TOKEN);
      rogue.add(
          api.post(
              "/api/agents/agt_rogue/tasks/" + task.path("taskId").asText() + "/running",
              Map.of("attempt", task.path("attempt").asInt())));
      Answer changeset = endpoint.complete(api, task);
      if (changeset.body().path("changesetId").asText().isEmpty()) {
        problems.add("no changeset id: " + changeset.text());
      }
    }

    @Override
    public void close() {
      endpoint.close();
    }
  }

  @Test
  void aChangeDoneByAnAgentOutsideCoreThroughTheWebhookAndTheApiCompletes() throws Exception {
    try (ExternalAgent agent = new ExternalAgent()) {
      Settings settings =
          Settings.defaults()
              .with(
                  Map.of(
                      "agents.runtime", "webhook",
                      "agents.webhook.url", agent.url(),
                      "agents.webhook.timeout", "300ms",
                      "queues.agent-wakeups.retry-delay", "200ms",
                      "changes.auto-approve", "true",
                      "verifier.simulated.duration", "0ms",
                      "release.simulated.duration", "0ms",
                      "api.token", TOKEN));
      try (CoreService core =
          CoreService.start(new CoreConfig(nats.url(), data, db.database().url(), 0, settings))) {
        ApiClient api = ApiClient.of(core, TOKEN);
        assertThat(
                api.post(
                        "/api/projects",
                        Map.of("projectId", "p-ext", "tenantId", "t1", "name", "External"))
                    .status())
            .isEqualTo(202);
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> api.get("/api/projects/p-ext").status() == 200);
        Answer created =
            api.post(
                "/api/projects/p-ext/changes",
                Map.of(
                    "clientRequestId",
                    "req-ext",
                    "tasks",
                    List.of(
                        Map.of("key", "a", "resourceScopes", List.of("path:src/a/")),
                        Map.of("key", "b", "resourceScopes", List.of("path:src/b/")),
                        Map.of(
                            "key",
                            "c",
                            "dependsOn",
                            List.of("a", "b"),
                            "resourceScopes",
                            List.of("path:src/c/", "path:docs/")))));
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        String changeId = created.body().path("changeId").asText();
        await()
            .atMost(Duration.ofSeconds(60))
            .until(
                () -> {
                  String state = api.get("/api/changes/" + changeId).body().path("state").asText();
                  return state.equals("completed") || state.equals("failed");
                });
        JsonNode change = api.get("/api/changes/" + changeId).body();
        assertThat(change.path("state").asText()).as(change.toString()).isEqualTo("completed");
        assertThat(agent.problems).isEmpty();
        assertThat(agent.accepted).hasSize(3);
        for (String key : agent.accepted) {
          assertThat(agent.posts.get(key).get()).as(key).isGreaterThanOrEqualTo(3);
        }
        assertThat(agent.rogue).hasSize(3).allMatch(a -> a.status() == 409);
        Set<String> agents = new java.util.HashSet<>();
        change.path("tasks").forEach(t -> agents.add(t.path("agentId").asText()));
        assertThat(agents).doesNotContain("agt_rogue").hasSize(3);
        long rogueEvents =
            core.database()
                .read(
                    tx ->
                        tx.queryLong(
                            "SELECT COUNT(*) FROM project_events WHERE project_id = ? AND event"
                                + " LIKE ?",
                            "p-ext",
                            "%agt_rogue%"));
        assertThat(rogueEvents).isZero();
      }
    }
  }
}
