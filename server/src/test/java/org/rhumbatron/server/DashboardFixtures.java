package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.Map;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.server.ApiClient.Answer;

/** What the dashboard tests set up in core through its API: Projects and dead letters. */
final class DashboardFixtures {
  static final Duration WAIT = DashboardBrowser.WAIT;

  private DashboardFixtures() {}

  static void provision(ApiClient api, String projectId) throws Exception {
    Answer sent =
        api.post(
            "/api/projects", Map.of("projectId", projectId, "tenantId", "t1", "name", projectId));
    assertThat(sent.status()).as(sent.text()).isEqualTo(202);
    await().atMost(WAIT).until(() -> api.get("/api/projects/" + projectId).status() == 200);
  }

  /**
   * A dead letter of {@code command}, as the integration consumer leaves one after its last
   * delivery; answers its id once {@code GET /api/dead-letters?<filter>} lists it alone.
   */
  static long deadLetter(
      CoreService core,
      ApiClient api,
      Command command,
      String reason,
      long originSequence,
      String filter)
      throws Exception {
    core.queues()
        .commands()
        .sendDeadLetter(TestDeadLetters.of(command, reason), originSequence)
        .get();
    String list = "/api/dead-letters?" + filter;
    await().atMost(WAIT).until(() -> api.get(list).body().path("deadLetters").size() == 1);
    return api.get(list).body().path("deadLetters").get(0).path("id").asLong();
  }

  static String firstEvent(ApiClient api, String projectId, String type) throws Exception {
    for (JsonNode e :
        api.get("/api/projects/" + projectId + "/events?limit=1000").body().path("events")) {
      if (e.path("eventType").asText().equals(type)) {
        return e.path("eventId").asText();
      }
    }
    throw new AssertionError("no " + type + " in the feed of " + projectId);
  }
}
