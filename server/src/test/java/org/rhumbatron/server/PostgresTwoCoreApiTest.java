package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.server.ApiClient.Answer;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * Two cores on one PostgreSQL database and one nats-server: each serves the whole API and consumes
 * the queues, and each answers as the other does, also when two approvals on one base arrive at the
 * two cores at once.
 */
class PostgresTwoCoreApiTest {
  private static final String TOKEN = "two-core-token";

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension db = DatabaseExtension.postgres();
  @TempDir Path data;

  @Test
  void twoCoresAnswerTheSameAndTwoApprovalsOnOneBasePromoteOne() throws Exception {
    Path dataOne = Files.createDirectories(data.resolve("one"));
    Path dataTwo = Files.createDirectories(data.resolve("two"));
    try (CoreService one = TestCores.withToken(nats.url(), dataOne, db.database().url(), TOKEN);
        CoreService two = TestCores.withToken(nats.url(), dataTwo, db.database().url(), TOKEN)) {
      ApiClient a = ApiClient.of(one, TOKEN);
      ApiClient b = ApiClient.of(two, TOKEN);
      List<String> projects = List.of("p2a", "p2b", "p2c", "p2d");
      for (String p : projects) {
        Answer provisioned =
            a.post("/api/projects", Map.of("projectId", p, "tenantId", "t1", "name", p));
        assertThat(provisioned.status()).as(provisioned.text()).isEqualTo(202);
      }
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> projects.stream().allMatch(p -> status(b, "/api/projects/" + p) == 200));

      // Per project a Change created on each core; both cores' consumers run them.
      List<String> viaOne = new ArrayList<>();
      List<String> viaTwo = new ArrayList<>();
      for (String p : projects) {
        viaOne.add(createChange(a, p, "req-one"));
        viaTwo.add(createChange(b, p, "req-two"));
      }
      List<String> all = new ArrayList<>(viaOne);
      all.addAll(viaTwo);
      await()
          .atMost(Duration.ofSeconds(120))
          .until(
              () -> all.stream().allMatch(c -> awaitingApproval(a, c) && awaitingApproval(b, c)));
      for (String c : all) {
        assertSameAnswer(a, b, "/api/changes/" + c);
      }

      // Per project both Candidates are on generation 0, and their approvals reach the two cores
      // at once: the project's root decides one after the other, whichever core runs it.
      List<CompletableFuture<Answer>> fromOne = new ArrayList<>();
      List<CompletableFuture<Answer>> fromTwo = new ArrayList<>();
      for (int i = 0; i < projects.size(); i++) {
        String first = viaOne.get(i);
        String second = viaTwo.get(i);
        fromOne.add(CompletableFuture.supplyAsync(() -> approve(a, first)));
        fromTwo.add(CompletableFuture.supplyAsync(() -> approve(b, second)));
      }
      for (int i = 0; i < projects.size(); i++) {
        Answer one1 = fromOne.get(i).get();
        Answer two2 = fromTwo.get(i).get();
        assertThat(one1.status()).as(one1.text()).isEqualTo(200);
        assertThat(two2.status()).as(two2.text()).isEqualTo(200);
        assertThat(
                List.of(
                    one1.body().path("promotion").asText(), two2.body().path("promotion").asText()))
            .containsExactlyInAnyOrder("promoted", "stale_base");
        assertThat(one1.body().path("generation").asLong()).isEqualTo(1);
        assertThat(two2.body().path("generation").asLong()).isEqualTo(1);
        String p = projects.get(i);
        assertSameAnswer(a, b, "/api/projects/" + p);
        assertThat(a.get("/api/projects/" + p).body().path("canonicalGeneration").asLong())
            .isEqualTo(1);
      }
      for (String c : all) {
        assertSameAnswer(a, b, "/api/changes/" + c);
      }
    }
  }

  private static int status(ApiClient api, String path) {
    return get(api, path).status();
  }

  private static boolean awaitingApproval(ApiClient api, String changeId) {
    return get(api, "/api/changes/" + changeId)
        .body()
        .path("state")
        .asText()
        .equals("awaiting_approval");
  }

  private static Answer get(ApiClient api, String path) {
    try {
      return api.get(path);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static String createChange(ApiClient api, String projectId, String requestId)
      throws Exception {
    Answer created =
        api.post(
            "/api/projects/" + projectId + "/changes",
            Map.of(
                "clientRequestId",
                requestId,
                "tasks",
                List.of(Map.of("key", "a"), Map.of("key", "b", "dependsOn", List.of("a")))));
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    return created.body().path("changeId").asText();
  }

  private static Answer approve(ApiClient api, String changeId) {
    try {
      return api.post("/api/changes/" + changeId + "/approve", "");
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static void assertSameAnswer(ApiClient a, ApiClient b, String path) throws Exception {
    Answer fromOne = a.get(path);
    Answer fromTwo = b.get(path);
    assertThat(fromOne.status()).as(path).isEqualTo(200);
    assertThat(fromTwo.status()).as(path).isEqualTo(fromOne.status());
    assertThat(fromTwo.body()).as(path).isEqualTo(fromOne.body());
  }
}
