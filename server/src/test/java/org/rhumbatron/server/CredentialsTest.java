package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.server.ApiClient.Answer;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * Credentials on two cores that share one PostgreSQL database: one created on the first core works
 * on the second, is stored as a hash only, shows when it was last used, and once revoked on the
 * first core the very next request on the second is refused.
 */
class CredentialsTest {
  static final String TOKEN = "credentials-operator-1";

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension db = DatabaseExtension.postgres();
  @TempDir Path data;

  CoreService core(String dir) throws Exception {
    Settings settings =
        Settings.defaults()
            .with(
                Map.of(
                    "agents.simulated.step-delay", "5ms",
                    "api.token", TOKEN,
                    "api.reads", "credential"));
    return CoreService.start(
        new CoreConfig(
            nats.url(),
            Files.createDirectories(data.resolve(dir)),
            db.database().url(),
            0,
            settings));
  }

  @Test
  void aRevocationOnOneCoreHoldsOnTheOtherAtOnce() throws Exception {
    try (CoreService one = core("one");
        CoreService two = core("two")) {
      ApiClient a = ApiClient.of(one, TOKEN);
      Answer created = a.post("/api/tokens", Map.of("role", "reader", "name", "grafana"));
      assertThat(created.status()).as(created.text()).isEqualTo(201);
      String id = created.body().path("id").asText();
      String token = created.body().path("token").asText();
      assertThat(token).startsWith("rbt_").hasSizeGreaterThan(40);
      assertThat(created.body().path("role").asText()).isEqualTo("reader");

      ApiClient reader = ApiClient.of(two, token);
      assertThat(reader.get("/api/streams").status()).isEqualTo(200);
      Answer write = reader.post("/api/projects", Map.of("projectId", "p", "tenantId", "t"));
      assertThat(write.status()).isEqualTo(403);
      assertThat(write.error())
          .isEqualTo("a reader credential may not POST /api/projects: it needs operator");

      // Listed without its token; the database holds its hash alone.
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> !listed(a, id).path("lastUsedAt").isNull());
      JsonNode row = listed(a, id);
      assertThat(row.path("name").asText()).isEqualTo("grafana");
      assertThat(row.has("token")).isFalse();
      assertThat(storedText(one)).doesNotContain(token);

      Answer revoked = a.delete("/api/tokens/" + id);
      assertThat(revoked.status()).as(revoked.text()).isEqualTo(200);
      Answer refused = reader.get("/api/streams");
      assertThat(refused.status()).isEqualTo(401);
      assertThat(refused.error()).isEqualTo("the bearer token is unknown or revoked");
      assertThat(listed(a, id).path("revokedAt").isNull()).isFalse();
      assertThat(a.delete("/api/tokens/" + id).status()).as("revoked once").isEqualTo(404);
    }
  }

  @Test
  void badInputNamesTheFieldAndTheRule() throws Exception {
    try (CoreService one = core("one")) {
      ApiClient a = ApiClient.of(one, TOKEN);
      Answer role = a.post("/api/tokens", Map.of("role", "task", "name", "x"));
      assertThat(role.status()).isEqualTo(400);
      assertThat(role.error()).isEqualTo("field role: one of operator, reader, agent; got 'task'");
      Answer name = a.post("/api/tokens", Map.of("role", "agent", "name", ""));
      assertThat(name.status()).isEqualTo(400);
      assertThat(name.body().path("field").asText()).isEqualTo("name");
      Answer rate = a.post("/api/tokens", Map.of("role", "agent", "name", "a", "rateLimit", 0));
      assertThat(rate.body().path("field").asText()).isEqualTo("rateLimit");
    }
  }

  static JsonNode listed(ApiClient a, String id) throws Exception {
    for (JsonNode t : a.get("/api/tokens").body().path("tokens")) {
      if (t.path("id").asText().equals(id)) {
        return t;
      }
    }
    throw new AssertionError("no credential " + id + " listed");
  }

  /** Every value of the credentials table as text. */
  static String storedText(CoreService core) {
    List<String> rows =
        core.database()
            .read(
                tx ->
                    tx.query(
                        "SELECT credential_id, token_sha256, role, name FROM credentials",
                        rs ->
                            rs.getString(1)
                                + " "
                                + rs.getString(2)
                                + " "
                                + rs.getString(3)
                                + " "
                                + rs.getString(4)));
    assertThat(rows).isNotEmpty();
    return String.join("\n", rows);
  }
}
