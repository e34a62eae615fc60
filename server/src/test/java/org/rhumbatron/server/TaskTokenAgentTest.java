package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.server.ApiClient.Answer;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;
import org.rhumbatron.testkit.webhooks.StandardWebhooks;
import org.rhumbatron.testkit.webhooks.StandardWebhooks.Message;

/**
 * An Agent outside core that holds no API token: it verifies every webhook (from the spec's text
 * and with the npm {@code standardwebhooks} package) and reports with the task token its wake
 * carried, until the Change completes. The last Task's Agent first tries what a token must not do:
 * another Task's token (403), a token of an ended attempt (403), its own token for another attempt
 * or Agent (403), a changed token (401), a token on an operator route (403); none of them changes
 * anything.
 */
class TaskTokenAgentTest {
  static final String OPERATOR = "task-token-operator-token";

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension db = DatabaseExtension.sqlite();
  @TempDir Path data;

  /** The Agent: takes signed wakes, reports with their task tokens only. */
  static final class TokenAgent implements AutoCloseable {
    final LocalAgent endpoint;
    final List<String> problems;
    final List<Message> wakes = new CopyOnWriteArrayList<>();
    final Map<String, String> tokens = new ConcurrentHashMap<>();
    final Map<String, String> agents = new ConcurrentHashMap<>();
    final Map<String, Integer> refused = new ConcurrentHashMap<>();
    volatile String secret;

    TokenAgent() throws Exception {
      endpoint = new LocalAgent(this::wake);
      problems = endpoint.problems;
    }

    String url() {
      return endpoint.url();
    }

    private void wake(HttpExchange exchange) throws java.io.IOException {
      String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      Message m =
          new Message(
              exchange.getRequestHeaders().getFirst("webhook-id"),
              exchange.getRequestHeaders().getFirst("webhook-timestamp"),
              exchange.getRequestHeaders().getFirst("webhook-signature"),
              body);
      wakes.add(m);
      if (!StandardWebhooks.verifyFromSpec(secret, m, Instant.now())) {
        problems.add("a wake that does not verify: " + m);
        LocalAgent.answer(exchange, 401);
        return;
      }
      LocalAgent.answer(exchange, 202);
      JsonNode task = ApiClient.JSON.readTree(body);
      if ("start".equals(task.path("kind").asText())) {
        endpoint.submit(() -> run(task));
      }
    }

    private void run(JsonNode task) throws Exception {
      String taskId = task.path("taskId").asText();
      String token = task.path("taskToken").asText();
      ApiClient api = new ApiClient(task.path("apiBaseUrl").asText(), token);
      if (taskId.endsWith(":c")) {
        tryWhatATokenMayNot(task, api, LocalAgent.base(task));
      }
      tokens.put(taskId, token);
      agents.put(taskId, task.path("agentId").asText());
      endpoint.complete(api, task);
    }

    /** Runs when a and b have completed, so their tokens name ended attempts. */
    private void tryWhatATokenMayNot(JsonNode task, ApiClient own, String base) throws Exception {
      String taskId = task.path("taskId").asText();
      String changeId = task.path("changeId").asText();
      int attempt = task.path("attempt").asInt();
      Map<String, Object> a = Map.of("attempt", attempt);
      String tokenOfA = tokens.get(changeId + ":a");
      ApiClient asA = own.withToken(tokenOfA);
      expect(
          "another task's token",
          403,
          asA.post(base + "failed", Map.of("attempt", attempt, "error", "x")));
      expect("another task's token", 403, asA.post(base + "running", a));
      String agentOfA = agents.get(changeId + ":a");
      String baseA = "/api/agents/" + agentOfA + "/tasks/" + changeId + ":a/";
      expect("an ended attempt", 403, asA.post(baseA + "completed", Map.of("attempt", 1)));
      expect(
          "an ended attempt", 403, asA.post(baseA + "failed", Map.of("attempt", 1, "error", "x")));
      expect("another attempt", 403, own.post(base + "running", Map.of("attempt", attempt + 1)));
      expect(
          "another agent", 403, own.post("/api/agents/agt_rogue/tasks/" + taskId + "/running", a));
      String token = task.path("taskToken").asText();
      int at = token.length() - 10;
      String changed =
          token.substring(0, at) + (token.charAt(at) == 'A' ? 'B' : 'A') + token.substring(at + 1);
      expect("a changed token", 401, own.withToken(changed).post(base + "running", a));
      expect("an operator route", 403, own.post("/api/changes/" + changeId + "/cancel", Map.of()));
    }

    private void expect(String what, int status, Answer answer) {
      refused.merge(what + " " + status, 1, Integer::sum);
      if (answer.status() != status) {
        problems.add(
            what + ": expected " + status + ", got " + answer.status() + " " + answer.text());
      }
    }

    @Override
    public void close() {
      endpoint.close();
    }
  }

  @Test
  void anAgentWithOnlyTaskTokensCompletesAChangeAndNoTokenReachesFurther() throws Exception {
    try (TokenAgent agent = new TokenAgent()) {
      Settings settings =
          Settings.defaults()
              .with(
                  Map.of(
                      "agents.runtime", "webhook",
                      "agents.webhook.url", agent.url(),
                      "changes.auto-approve", "true",
                      "verifier.simulated.duration", "0ms",
                      "release.simulated.duration", "0ms",
                      "api.token", OPERATOR));
      try (CoreService core =
          CoreService.start(new CoreConfig(nats.url(), data, db.database().url(), 0, settings))) {
        ApiClient api = ApiClient.of(core, OPERATOR);
        Answer secret = api.post("/api/webhooks/secrets", Map.of());
        assertThat(secret.status()).as(secret.text()).isEqualTo(201);
        agent.secret = secret.body().path("secret").asText();
        assertThat(agent.secret).startsWith("whsec_");
        assertThat(api.get("/api/webhooks/secrets").text())
            .contains(secret.body().path("keyId").asText())
            .doesNotContain(agent.secret.substring(6));

        AgentChanges.provision(api, "p-tok");
        String changeId =
            AgentChanges.create(
                api,
                "p-tok",
                List.of(
                    Map.of("key", "a", "resourceScopes", List.of("path:src/a/")),
                    Map.of("key", "b", "resourceScopes", List.of("path:src/b/")),
                    Map.of(
                        "key",
                        "c",
                        "dependsOn",
                        List.of("a", "b"),
                        "resourceScopes",
                        List.of("path:src/c/"))));
        JsonNode change = AgentChanges.awaitEnd(api, changeId);
        assertThat(agent.problems).isEmpty();
        assertThat(change.path("state").asText()).as(change.toString()).isEqualTo("completed");
        change
            .path("tasks")
            .forEach(
                t -> {
                  assertThat(t.path("state").asText()).as(t.toString()).isEqualTo("completed");
                  assertThat(t.path("attempt").asInt()).as(t.toString()).isEqualTo(1);
                });
        assertThat(agent.refused.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(8);

        Optional<List<String>> byNode = StandardWebhooks.verifyWithNode(agent.secret, agent.wakes);
        byNode.ifPresent(
            results -> assertThat(results).hasSize(agent.wakes.size()).containsOnly("ok"));
        System.out.printf(
            "task tokens: %d wakes (verified from the spec%s), %d reports, refused %s%n",
            agent.wakes.size(),
            byNode.isPresent() ? " and by npm standardwebhooks" : "",
            agent.endpoint.reports.get(),
            agent.refused);
      }
    }
  }
}
