package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.server.ApiClient.Answer;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * An ended Change leaves nothing running, with an Agent outside core on the webhook: the Agent runs
 * a Task and holds claims; the Change ends (cancelled by the API, or failed because another of its
 * Tasks failed on its last attempt). The Agent gets a webhook of kind {@code stop}, the Tasks that
 * had not ended are {@code cancelled} with the reason, the claims are released, the project view
 * shows no active Agent of the Change, and the Agent's late report is refused.
 */
class ChangeEndAgentsTest {
  static final String TOKEN = "change-end-token";

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @TempDir Path data;

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  /** An Agent that starts each Task it is given and claims its scopes, then waits to be told. */
  static final class HoldingAgent implements AutoCloseable {
    final LocalAgent endpoint;
    final List<String> problems;
    final List<JsonNode> webhooks = new CopyOnWriteArrayList<>();
    final List<JsonNode> working = new CopyOnWriteArrayList<>();

    HoldingAgent() throws Exception {
      endpoint = new LocalAgent(this::wake);
      problems = endpoint.problems;
    }

    String url() {
      return endpoint.url();
    }

    private void wake(HttpExchange exchange) throws java.io.IOException {
      JsonNode body = ApiClient.JSON.readTree(exchange.getRequestBody());
      webhooks.add(body);
      LocalAgent.answer(exchange, 202);
      if ("start".equals(body.path("kind").asText())) {
        endpoint.submit(() -> run(body));
      }
    }

    private void run(JsonNode task) throws Exception {
      ApiClient api = api(task);
      int attempt = task.path("attempt").asInt();
      endpoint.check(api.post(base(task) + "running", Map.of("attempt", attempt)));
      for (JsonNode scope : task.path("scopes")) {
        endpoint.check(
            api.post(base(task) + "claims", Map.of("attempt", attempt, "key", scope.asText())));
      }
      working.add(task);
    }

    static ApiClient api(JsonNode task) {
      return new ApiClient(task.path("apiBaseUrl").asText(), TOKEN);
    }

    static String base(JsonNode task) {
      return LocalAgent.base(task);
    }

    Optional<JsonNode> working(String taskId) {
      return working.stream().filter(t -> t.path("taskId").asText().equals(taskId)).findFirst();
    }

    List<JsonNode> stops() {
      return webhooks.stream().filter(b -> "stop".equals(b.path("kind").asText())).toList();
    }

    @Override
    public void close() {
      endpoint.close();
    }
  }

  private CoreService core(HoldingAgent agent, Map<String, String> more) throws Exception {
    Map<String, String> overrides = new java.util.HashMap<>(more);
    overrides.putAll(
        Map.of(
            "agents.runtime",
            "webhook",
            "agents.webhook.url",
            agent.url(),
            "agents.webhook.timeout",
            "5s",
            "api.token",
            TOKEN));
    Settings settings = Settings.defaults().with(overrides);
    return CoreService.start(new CoreConfig(nats.url(), data, db().url(), 0, settings));
  }

  private static String createChange(ApiClient api, String request, List<String> keys)
      throws Exception {
    assertThat(
            api.post(
                    "/api/projects",
                    Map.of("projectId", "p-end", "tenantId", "t1", "name", "Change ends"))
                .status())
        .isEqualTo(202);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> api.get("/api/projects/p-end").status() == 200);
    List<Map<String, Object>> tasks = new ArrayList<>();
    for (String key : keys) {
      tasks.add(Map.of("key", key, "resourceScopes", List.of("path:src/" + key + "/")));
    }
    Answer created =
        api.post("/api/projects/p-end/changes", Map.of("clientRequestId", request, "tasks", tasks));
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    return created.body().path("changeId").asText();
  }

  private static long heldClaims(CoreService core, String changeId) {
    return core.database()
        .read(
            tx ->
                tx.queryLong(
                    "SELECT COUNT(*) FROM claims WHERE change_id = ? AND state = 'held'",
                    changeId));
  }

  private static JsonNode task(ApiClient api, String taskId) throws Exception {
    for (JsonNode t : api.get("/api/changes/" + taskId.split(":")[0]).body().path("tasks")) {
      if (t.path("taskId").asText().equals(taskId)) {
        return t;
      }
    }
    throw new AssertionError("no task " + taskId);
  }

  /** The project view's Agents of the Change once the projector applied the cancelled Tasks. */
  private static List<JsonNode> viewAgentsAfterCancel(ApiClient api, String changeId, int tasks) {
    List<JsonNode> agents = new ArrayList<>();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              agents.clear();
              int cancelled = 0;
              for (JsonNode item : api.get("/api/projects/p-end/view").body().path("items")) {
                if (!changeId.equals(item.path("changeId").asText())) {
                  continue;
                }
                if ("agent".equals(item.path("kind").asText())) {
                  agents.add(item);
                }
                if ("task".equals(item.path("kind").asText())
                    && "cancelled".equals(item.path("state").asText())) {
                  cancelled++;
                }
              }
              return cancelled == tasks;
            });
    return agents;
  }

  @DatabaseTest
  void aCancelledChangeStopsItsAgentThroughTheWebhookAndLeavesNothingRunning() throws Exception {
    try (HoldingAgent agent = new HoldingAgent();
        CoreService core = core(agent, Map.of("changes.agents-per-change", "1"))) {
      ApiClient api = ApiClient.of(core, TOKEN);
      String c = createChange(api, "req-cancel", List.of("a", "b"));
      await().atMost(Duration.ofSeconds(30)).until(() -> agent.working(c + ":a").isPresent());
      JsonNode a = agent.working(c + ":a").orElseThrow();
      assertThat(task(api, c + ":b").path("state").asText()).isEqualTo("ready");
      assertThat(heldClaims(core, c)).isEqualTo(1);

      Answer cancel = api.post("/api/changes/" + c + "/cancel", Map.of());
      assertThat(cancel.status()).as(cancel.text()).isEqualTo(200);

      await().atMost(Duration.ofSeconds(10)).until(() -> !agent.stops().isEmpty());
      assertThat(agent.stops()).hasSize(1);
      JsonNode stop = agent.stops().get(0);
      assertThat(stop.path("taskId").asText()).isEqualTo(c + ":a");
      assertThat(stop.path("agentId").asText()).isEqualTo(a.path("agentId").asText());
      assertThat(stop.path("attempt").asInt()).isEqualTo(1);
      assertThat(stop.path("reason").asText()).isEqualTo("change_cancelled");
      for (String key : List.of("a", "b")) {
        JsonNode t = task(api, c + ":" + key);
        assertThat(t.path("state").asText()).as(key).isEqualTo("cancelled");
        assertThat(t.path("endReason").asText()).as(key).isEqualTo("change_cancelled");
      }
      assertThat(heldClaims(core, c)).isZero();
      List<JsonNode> agents = viewAgentsAfterCancel(api, c, 2);
      assertThat(agents).isNotEmpty().noneMatch(i -> "active".equals(i.path("state").asText()));

      // The stopped Agent reports late: 409, and the Task stays cancelled.
      Answer late =
          HoldingAgent.api(a).post(HoldingAgent.base(a) + "completed", Map.of("attempt", 1));
      assertThat(late.status()).as(late.text()).isEqualTo(409);
      assertThat(late.text()).contains("cancelled (change_cancelled)");
      assertThat(task(api, c + ":a").path("state").asText()).isEqualTo("cancelled");
      assertThat(agent.problems).isEmpty();
    }
  }

  @DatabaseTest
  void aChangeFailedByAnotherTaskStopsTheAgentOfItsRunningTask() throws Exception {
    try (HoldingAgent agent = new HoldingAgent();
        CoreService core = core(agent, Map.of("changes.task-attempts", "1"))) {
      ApiClient api = ApiClient.of(core, TOKEN);
      String c = createChange(api, "req-fail", List.of("a", "b"));
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> agent.working(c + ":a").isPresent() && agent.working(c + ":b").isPresent());
      JsonNode a = agent.working(c + ":a").orElseThrow();
      JsonNode b = agent.working(c + ":b").orElseThrow();
      Answer failed =
          HoldingAgent.api(a)
              .post(HoldingAgent.base(a) + "failed", Map.of("attempt", 1, "error", "broken"));
      assertThat(failed.status()).as(failed.text()).isEqualTo(200);

      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> "failed".equals(api.get("/api/changes/" + c).body().path("state").asText()));
      await().atMost(Duration.ofSeconds(10)).until(() -> !agent.stops().isEmpty());
      assertThat(agent.stops())
          .singleElement()
          .satisfies(
              s -> {
                assertThat(s.path("taskId").asText()).isEqualTo(c + ":b");
                assertThat(s.path("agentId").asText()).isEqualTo(b.path("agentId").asText());
                assertThat(s.path("reason").asText()).isEqualTo("change_failed");
              });
      assertThat(task(api, c + ":a").path("state").asText()).isEqualTo("failed");
      JsonNode tb = task(api, c + ":b");
      assertThat(tb.path("state").asText()).isEqualTo("cancelled");
      assertThat(tb.path("endReason").asText()).isEqualTo("change_failed");
      await().atMost(Duration.ofSeconds(10)).until(() -> heldClaims(core, c) == 0);
      List<JsonNode> agents = viewAgentsAfterCancel(api, c, 1);
      assertThat(agents).hasSize(2).noneMatch(i -> "active".equals(i.path("state").asText()));
      assertThat(agent.problems).isEmpty();
    }
  }
}
