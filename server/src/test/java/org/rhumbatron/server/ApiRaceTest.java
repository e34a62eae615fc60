package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * Two parallel POSTs of the same Change (same clientRequestId) make one Change: one answer 201, the
 * other 200 with the same Change. Run against SQLite and PostgreSQL.
 */
class ApiRaceTest {
  static final String TOKEN = "race-token";

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @TempDir Path data;

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  @DatabaseTest
  void anIdempotentCreateRacedByTwoRequestsMakesOneChange() throws Exception {
    Settings settings = Settings.defaults().with(Map.of("api.token", TOKEN));
    try (CoreService core =
        CoreService.start(new CoreConfig(nats.url(), data, db().url(), 0, settings))) {
      ApiClient api = ApiClient.of(core, TOKEN);
      api.post("/api/projects", Map.of("projectId", "p-race", "tenantId", "t", "name", "R"));
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> api.get("/api/projects/p-race").status() == 200);
      HttpClient http = HttpClient.newHttpClient();
      for (int round = 0; round < 5; round++) {
        String body =
            ApiClient.JSON.writeValueAsString(
                Map.of(
                    "clientRequestId",
                    "req-race-" + round,
                    "tasks",
                    List.of(Map.of("key", "a"), Map.of("key", "b", "dependsOn", List.of("a")))));
        HttpRequest request =
            HttpRequest.newBuilder(
                    URI.create(
                        "http://127.0.0.1:" + core.httpPort() + "/api/projects/p-race/changes"))
                .header("Authorization", "Bearer " + TOKEN)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        CompletableFuture<HttpResponse<String>> one =
            http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
        CompletableFuture<HttpResponse<String>> two =
            http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
        List<HttpResponse<String>> answers = List.of(one.get(), two.get());
        assertThat(answers.stream().map(HttpResponse::statusCode).sorted().toList())
            .as(answers.get(0).body() + " / " + answers.get(1).body())
            .containsExactly(200, 201);
        String first = ApiClient.JSON.readTree(answers.get(0).body()).path("changeId").asText();
        String second = ApiClient.JSON.readTree(answers.get(1).body()).path("changeId").asText();
        assertThat(first).isEqualTo(second);
        String requestId = "req-race-" + round;
        long rows =
            core.database()
                .read(
                    tx ->
                        tx.queryLong(
                            "SELECT COUNT(*) FROM changes WHERE project_id = ? AND"
                                + " client_request_id = ?",
                            "p-race",
                            requestId));
        assertThat(rows).isEqualTo(1);
        long tasks =
            core.database()
                .read(tx -> tx.queryLong("SELECT COUNT(*) FROM tasks WHERE change_id = ?", first));
        assertThat(tasks).isEqualTo(2);
      }
    }
  }
}
