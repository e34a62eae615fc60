package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * A rolling restart of three nodes under load: on one PostgreSQL database and one nats-server,
 * clients create Changes and read them through the nodes' APIs round-robin while, three times, a
 * new node starts and then an old one stops.
 *
 * <p>What a client sees: from the moment a node's stop begins it answers every request 503 with
 * {@code Retry-After} and a JSON error naming why, and finishes the requests it took; its port
 * refuses connections only once its stop is done. The client (as a load balancer would) retries a
 * 503 or a refused connection on the next node. Any other answer, or a refused connection from a
 * node whose port is still open, is a failure; so is a Change that does not end afterwards.
 */
class PostgresRollingRestartTest {
  private static final String TOKEN = "rolling-token";
  private static final ObjectMapper JSON = new ObjectMapper();
  // Enough Projects that each one's chain of promotions (one at a time) stays short.
  private static final List<String> PROJECTS =
      List.of("roll-a", "roll-b", "roll-c", "roll-d", "roll-e", "roll-f", "roll-g", "roll-h");
  private static final int RESTARTS = 3;
  private static final int CLIENTS = 2;
  private static final Duration PACE = Duration.ofMillis(100);

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension db = DatabaseExtension.postgres();
  @TempDir Path data;

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  // The nodes clients send to: a node leaves only once its stop returned, so its stop is seen.
  private final List<Node> nodes = new CopyOnWriteArrayList<>();
  private final List<CoreService> started = new CopyOnWriteArrayList<>();
  private final Queue<String> wrong = new ConcurrentLinkedQueue<>();
  private final Queue<String> created = new ConcurrentLinkedQueue<>();
  private final AtomicInteger next = new AtomicInteger();
  private final AtomicInteger stopping503 = new AtomicInteger();
  private final AtomicInteger requests = new AtomicInteger();
  private final AtomicBoolean loadRuns = new AtomicBoolean(true);
  private int nodeNumber;

  @AfterEach
  void stopAll() {
    loadRuns.set(false);
    started.forEach(CoreService::close);
  }

  @Test
  void aRollingRestartAnswersAtMostRetryable503sAndLeavesNoChangeStuck() throws Exception {
    for (int i = 0; i < 3; i++) {
      nodes.add(startNode());
    }
    for (String p : PROJECTS) {
      JsonNode provisioned =
          send("POST", "/api/projects", Map.of("projectId", p, "tenantId", "t1", "name", p));
      assertThat(provisioned).as(String.join("; ", wrong)).isNotNull();
    }
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> PROJECTS.stream().allMatch(p -> send("GET", "/api/projects/" + p, null) != null));

    List<Thread> clients = new ArrayList<>();
    for (int c = 0; c < CLIENTS; c++) {
      int client = c;
      Thread t =
          new Thread(
              () -> {
                try {
                  load(client);
                } catch (RuntimeException e) {
                  wrong.add("client " + client + " failed: " + e);
                }
              },
              "rolling-client-" + c);
      t.start();
      clients.add(t);
    }
    for (int r = 0; r < RESTARTS; r++) {
      awaitMoreChanges(5);
      nodes.add(startNode());
      awaitMoreChanges(5);
      Node old = nodes.get(0);
      old.core().close();
      nodes.remove(old);
    }
    awaitMoreChanges(5);
    loadRuns.set(false);
    for (Thread t : clients) {
      t.join(Duration.ofSeconds(60).toMillis());
    }

    assertThat(wrong).as("answers other than 2xx or a retryable 503").isEmpty();
    assertThat(stopping503.get())
        .as("requests that reached a stopping node, of " + requests.get())
        .isPositive();
    // Well under the queues' ack wait (60 s): what a stopped node took and did not run comes back
    // at once, not after it.
    CoreService survivor = nodes.get(0).core();
    await()
        .atMost(Duration.ofSeconds(45))
        .untilAsserted(
            () -> {
              List<String> open =
                  created.stream()
                      .filter(
                          id ->
                              !survivor
                                  .lifecycle()
                                  .changes()
                                  .change(id)
                                  .map(ChangeInfo::ended)
                                  .orElse(false))
                      .toList();
              assertThat(open)
                  .as("Changes still open after the restarts, the first: %s", first(open))
                  .isEmpty();
            });
  }

  /** The first of {@code open} as the API shows it, with its Tasks. */
  private String first(List<String> open) {
    return open.isEmpty() ? "" : String.valueOf(send("GET", "/api/changes/" + open.get(0), null));
  }

  /** A node and its port, kept: a closed core no longer knows it. */
  private record Node(CoreService core, int port) {}

  private Node startNode() throws Exception {
    Path dir = Files.createDirectories(data.resolve("node" + ++nodeNumber));
    Settings settings =
        Settings.defaults()
            .with(
                Map.of(
                    Settings.SIMULATED_STEP_DELAY.key(),
                    "5ms",
                    Settings.SIMULATED_VERIFIER_DURATION.key(),
                    "0ms",
                    Settings.SIMULATED_RELEASE_DURATION.key(),
                    "0ms",
                    Settings.AUTO_APPROVE.key(),
                    "true",
                    // Changes of one Project overlap: a stale Candidate waits this, not 45 s.
                    Settings.INTEGRATION_CONFLICT_REVIEW_DELAY.key(),
                    "1s",
                    "api.token",
                    TOKEN,
                    "cluster.node-id",
                    "roll-" + nodeNumber));
    CoreService core =
        CoreService.start(new CoreConfig(nats.url(), dir, db.database().url(), 0, settings));
    started.add(core);
    return new Node(core, core.httpPort());
  }

  /** One client: creates a Change, reads it back (likely on another node), and again. */
  private void load(int client) {
    for (int i = 0; loadRuns.get(); i++) {
      String project = PROJECTS.get((client + i) % PROJECTS.size());
      JsonNode change =
          send(
              "POST",
              "/api/projects/" + project + "/changes",
              Map.of(
                  "clientRequestId",
                  "roll-" + client + "-" + i,
                  "tasks",
                  List.of(Map.of("key", "a"), Map.of("key", "b", "dependsOn", List.of("a")))));
      if (change == null) {
        return; // wrong holds why
      }
      String id = change.path("changeId").asText();
      created.add(id);
      if (send("GET", "/api/changes/" + id, null) == null) {
        return;
      }
      pace();
    }
  }

  /** A client's rate: about ten Changes a second each, a load the loaded 2-core machine carries. */
  private static void pace() {
    try {
      Thread.sleep(PACE.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Sends to the nodes round-robin until one answers 2xx, and returns its JSON; a 503 with
   * Retry-After or a connection a stopped node refused goes on to the next node. Anything else is
   * written to {@link #wrong}, and the answer is null.
   */
  private JsonNode send(String method, String path, Object body) {
    for (int attempt = 0; attempt < 100; attempt++) {
      List<Node> live = List.copyOf(nodes);
      Node node = live.get(Math.floorMod(next.getAndIncrement(), live.size()));
      requests.incrementAndGet();
      HttpResponse<String> response;
      try {
        response =
            http.send(request(node, method, path, body), HttpResponse.BodyHandlers.ofString());
      } catch (IOException e) {
        if (!node.core().httpClosed()) {
          wrong.add(method + " " + path + ": " + e + " from a node whose port is open");
          return null;
        }
        continue;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return null;
      }
      int status = response.statusCode();
      JsonNode json = json(response.body());
      if (status / 100 == 2) {
        return json;
      }
      String error = json == null ? null : json.path("error").asText(null);
      if (status != 503
          || response.headers().firstValue("Retry-After").isEmpty()
          || error == null) {
        wrong.add(
            method
                + " "
                + path
                + ": "
                + status
                + " "
                + response.headers().map()
                + " "
                + response.body());
        return null;
      }
      if (error.contains("is stopping")) {
        stopping503.incrementAndGet();
      }
    }
    wrong.add(method + " " + path + ": no node answered in 100 attempts");
    return null;
  }

  private static HttpRequest request(Node node, String method, String path, Object body) {
    try {
      return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port() + path))
          .timeout(Duration.ofSeconds(30))
          .header("Content-Type", "application/json")
          .header("Authorization", "Bearer " + TOKEN)
          .method(
              method,
              body == null
                  ? HttpRequest.BodyPublishers.noBody()
                  : HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
          .build();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static JsonNode json(String text) {
    try {
      return text.isEmpty() ? null : JSON.readTree(text);
    } catch (IOException e) {
      return null;
    }
  }

  private void awaitMoreChanges(int more) {
    int target = created.size() + more;
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> created.size() >= target || !wrong.isEmpty());
    assertThat(wrong).as("answers other than 2xx or a retryable 503").isEmpty();
  }
}
