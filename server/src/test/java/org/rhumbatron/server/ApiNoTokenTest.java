package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.server.ApiClient.Answer;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * Core without api.token refuses every write with 403 and says why; reads stay open on loopback (a
 * wrong token sent with one is still refused). And {@code /readyz} names NATS when it is down.
 */
class ApiNoTokenTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension db = DatabaseExtension.sqlite();
  @TempDir Path data;

  @Test
  void withoutATokenEveryWriteIs403AndReadsStayOpen() throws Exception {
    try (CoreService core =
        CoreService.start(
            new CoreConfig(nats.url(), data, db.database().url(), 0, Settings.defaults()))) {
      ApiClient api = ApiClient.of(core, "anything");
      Answer write =
          api.post("/api/projects", Map.of("projectId", "p-nt", "tenantId", "t", "name", "n"));
      assertThat(write.status()).isEqualTo(403);
      assertThat(write.error()).contains("no API token is configured");
      assertThat(api.withToken(null).delete("/api/projects/p-nt").status()).isEqualTo(403);
      assertThat(api.post("/api/dead-letters/1/dismiss", "").status()).isEqualTo(403);
      assertThat(api.post("/api/agents/a/tasks/t/running", "{}").status()).isEqualTo(403);
      ApiClient anyone = api.withToken(null);
      assertThat(anyone.get("/api/streams").status()).isEqualTo(200);
      assertThat(anyone.get("/api/dead-letters").status()).isEqualTo(200);
      assertThat(api.get("/api/streams").status()).as("a token sent is checked").isEqualTo(401);
      assertThat(core.lifecycle().projects().project("p-nt")).isEmpty();
    }
  }

  @Test
  void readyzIs503NamingNatsWhenItIsDown() throws Exception {
    try (CoreService core =
        CoreService.start(
            new CoreConfig(nats.url(), data, db.database().url(), 0, Settings.defaults()))) {
      ApiClient api = ApiClient.of(core, null);
      assertThat(api.get("/readyz").status()).isEqualTo(200);
      nats.server().stop();
      await().atMost(Duration.ofSeconds(30)).until(() -> api.get("/readyz").status() == 503);
      Answer down = api.get("/readyz");
      assertThat(down.error()).startsWith("not ready: nats is");
      assertThat(down.body().path("database").asText()).isEqualTo("ok");
      Answer alive = api.get("/healthz");
      assertThat(alive.status()).as("alive: a probe must not restart core for NATS").isEqualTo(200);
      assertThat(alive.body().path("status").asText()).isEqualTo("degraded");
    }
  }
}
