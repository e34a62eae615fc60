package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.nats.client.Connection;
import io.nats.client.Nats;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.testkit.nats.NatsServer;

/**
 * Core started with {@code --nats} while no server answers there: it serves and commits at once,
 * and starts its queues and router when the server comes; or, with the flag, fails to start.
 */
class CoreNatsDownAtStartTest {
  private static final String TOKEN = "t0ken";

  @TempDir Path data;

  @Test
  void servesAndCommitsWhileNatsIsDownThenCatchesUpWhenItComes() throws Exception {
    try (NatsServer server = NatsServer.start()) {
      server.stop(); // its port and store stay: nothing listens there until restart()
      String url = server.url();
      String notConnected = "NATS at " + url + " is not connected yet";
      Map<String, String> settings =
          Map.of("api.token", TOKEN, "agents.simulated.step-delay", "5ms");
      try (CoreService core = CoreService.start(CoreOptions.config(url, data, 0, settings))) {
        ApiClient api = ApiClient.of(core, TOKEN);
        assertThat(core.natsStarted()).isFalse();
        ApiClient.Answer health = api.get("/healthz");
        assertThat(health.status()).isEqualTo(200);
        assertThat(health.body().path("status").asText()).isEqualTo("waiting");
        ApiClient.Answer ready = api.get("/readyz");
        assertThat(ready.status()).isEqualTo(503);
        assertThat(ready.error()).contains(notConnected);

        // What needs NATS now is refused up front, and writes nothing.
        ApiClient.Answer streams = api.get("/api/streams");
        assertThat(streams.status()).isEqualTo(503);
        assertThat(streams.error()).isEqualTo(notConnected);
        ApiClient.Answer provision =
            api.post("/api/projects", Map.of("projectId", "p-sent", "tenantId", "t", "name", "n"));
        assertThat(provision.status()).isEqualTo(503);
        assertThat(provision.error()).isEqualTo(notConnected);
        assertThat(core.lifecycle().projects().project("p-sent")).isEmpty();

        // What commits without NATS commits: the state and its Events wait in the outbox.
        assertThat(core.lifecycle().projects().create("p-wait", "t", "Waiting").get()).isTrue();
        ApiClient.Answer created =
            api.post(
                "/api/projects/p-wait/changes",
                Map.of(
                    "clientRequestId",
                    "req-1",
                    "tasks",
                    List.of(
                        Map.of("key", "a"),
                        Map.of("key", "b", "dependsOn", List.of("a")),
                        Map.of("key", "c"))));
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        String changeId = created.body().path("changeId").asText();
        Database db = core.database();
        assertThat(count(db, "SELECT COUNT(*) FROM changes WHERE change_id = ?", changeId))
            .isEqualTo(1);
        assertThat(count(db, "SELECT COUNT(*) FROM tasks WHERE change_id = ?", changeId))
            .isEqualTo(3);
        assertThat(
                count(
                    db,
                    "SELECT COUNT(*) FROM outbox WHERE event_type = ? AND state = 'pending'",
                    EventType.CHANGE_CREATED.wireName()))
            .isEqualTo(1);
        assertThat(count(db, "SELECT COUNT(*) FROM outbox WHERE state <> 'pending'", null))
            .isZero();

        server.restart();

        await().atMost(Duration.ofSeconds(60)).until(core::natsStarted);
        assertThat(api.get("/readyz").status()).isEqualTo(200);
        try (Connection reader = Nats.connect(url)) {
          assertThat(reader.jetStreamManagement().getStreamNames())
              .contains("EVENTS_00", "EVENTS_07", "COMMANDS")
              .hasSize(9);
          await()
              .atMost(Duration.ofSeconds(30))
              .until(
                  () ->
                      count(db, "SELECT COUNT(*) FROM outbox WHERE state <> 'published'", null)
                          == 0);
          assertThat(StreamReader.events(reader, "p-wait"))
              .anyMatch(
                  e -> e.eventType() == EventType.CHANGE_CREATED && changeId.equals(e.changeId()));
          // The router dispatched the Change: its Tasks ran through the simulated Agents.
          await()
              .atMost(Duration.ofSeconds(60))
              .until(
                  () ->
                      core.lifecycle().changes().tasks(changeId).stream()
                          .allMatch(t -> t.state().equals("completed")));
          await()
              .atMost(Duration.ofSeconds(30))
              .until(
                  () ->
                      StreamReader.events(reader, "p-wait").stream()
                          .anyMatch(e -> e.eventType() == EventType.TASK_COMPLETED));
        }
      }
    }
  }

  @Test
  void aCoreThatWaitsForNatsStopsCleanly() throws Exception {
    String url = "nats://127.0.0.1:" + NatsServer.freePort();
    CoreService core = CoreService.start(CoreOptions.config(url, data, 0, Map.of()));
    assertThat(core.natsStarted()).isFalse();
    long start = System.nanoTime();
    core.close();
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    assertThat(Thread.getAllStackTraces().keySet())
        .noneMatch(t -> t.getName().startsWith("nats-start-wait") && t.isAlive());
  }

  @Test
  void withTheFlagOffCoreStartedWithoutNatsFailsNamingTheUrl() throws Exception {
    String url = "nats://127.0.0.1:" + NatsServer.freePort();
    assertThatThrownBy(
            () ->
                CoreService.start(
                    CoreOptions.config(url, data, 0, Map.of("nats.wait-at-start", "false"))))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(url);
  }

  private static long count(Database db, String sql, String arg) {
    return db.read(tx -> arg == null ? tx.queryLong(sql) : tx.queryLong(sql, arg));
  }
}
