package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.rhumbatron.server.ApiClient.Answer;

/** What the tests of Agents outside core do through the operator's API around the Agent. */
final class AgentChanges {
  /** The states a Change does not leave. */
  static final Set<String> ENDED =
      Set.of("completed", "failed", "cancelled", "declined", "not_selected");

  private AgentChanges() {}

  /** Provisions Project {@code projectId} and waits until it exists. */
  static void provision(ApiClient api, String projectId) throws Exception {
    Answer sent =
        api.post(
            "/api/projects", Map.of("projectId", projectId, "tenantId", "t", "name", projectId));
    assertThat(sent.status()).as(sent.text()).isEqualTo(202);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> api.get("/api/projects/" + projectId).status() == 200);
  }

  /** Creates a Change of {@code tasks} in {@code projectId}; its id. */
  static String create(ApiClient api, String projectId, List<Map<String, Object>> tasks)
      throws Exception {
    Answer created =
        api.post(
            "/api/projects/" + projectId + "/changes",
            Map.of("clientRequestId", "req-" + projectId, "tasks", tasks));
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    return created.body().path("changeId").asText();
  }

  /** Waits until Change {@code changeId} has ended (at most a minute); the Change then. */
  static JsonNode awaitEnd(ApiClient api, String changeId) throws Exception {
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                ENDED.contains(api.get("/api/changes/" + changeId).body().path("state").asText()));
    return api.get("/api/changes/" + changeId).body();
  }
}
