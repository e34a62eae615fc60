package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.coordinator.outbox.StreamNudges;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.server.ApiClient.Answer;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * Each credential has its own request rate (its own, or {@code api.rate-limit}): over it a request
 * is 429 with {@code Retry-After}, and passes again once core's clock moved on; refused requests
 * are counted on {@code /metrics} by reason.
 */
class ApiRateLimitTest {
  static final String TOKEN = "rate-operator-1";

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension db = DatabaseExtension.sqlite();
  @TempDir Path data;

  @Test
  void overItsRateACredentialWaitsAndRefusalsAreCounted() throws Exception {
    SettableClock clock = new SettableClock(Clock.systemUTC().instant());
    Settings settings =
        Settings.defaults()
            .with(
                Map.of(
                    "agents.simulated.step-delay", "5ms",
                    "api.token", TOKEN,
                    "api.rate-limit", "5"));
    try (CoreService core =
        CoreService.start(
            new CoreConfig(nats.url(), data, db.database().url(), 0, settings),
            clock,
            StreamNudges.NONE,
            started -> {})) {
      ApiClient operator = ApiClient.of(core, TOKEN);
      Answer created =
          operator.post("/api/tokens", Map.of("role", "reader", "name", "slow", "rateLimit", 2));
      assertThat(created.status()).as(created.text()).isEqualTo(201);
      ApiClient reader = operator.withToken(created.body().path("token").asText());

      assertThat(reader.get("/api/streams").status()).isEqualTo(200);
      assertThat(reader.get("/api/streams").status()).isEqualTo(200);
      HttpResponse<String> over = rawGet(reader, "/api/streams");
      assertThat(over.statusCode()).isEqualTo(429);
      assertThat(over.headers().firstValue("Retry-After")).hasValue("1");
      assertThat(ApiClient.JSON.readTree(over.body()).path("error").asText())
          .isEqualTo("too many requests: at most 2 per second for this credential");
      assertThat(operator.get("/api/streams").status()).as("its own bucket").isEqualTo(200);
      clock.advance(Duration.ofSeconds(1));
      assertThat(reader.get("/api/streams").status()).isEqualTo(200);

      for (int i = 0; i < 3; i++) {
        assertThat(operator.withToken("rbt_guessed" + i).get("/api/streams").status())
            .isEqualTo(401);
      }
      assertThat(operator.withToken(null).post("/api/projects", "{}").status()).isEqualTo(401);
      assertThat(reader.post("/api/projects", "{}").status()).isEqualTo(403);
      assertThat(refused(core, "invalid")).isEqualTo(3);
      assertThat(refused(core, "missing")).isEqualTo(1);
      assertThat(refused(core, "forbidden")).isEqualTo(1);
      assertThat(refused(core, "rate-limited")).isEqualTo(1);
    }
  }

  /** A GET whose headers the test reads. */
  static HttpResponse<String> rawGet(ApiClient client, String path) throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(client.base() + path))
            .header("Authorization", "Bearer " + client.token())
            .build();
    return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
  }

  static double refused(CoreService core, String reason) throws Exception {
    return CoreMetricsTest.value(core, "rhumbatron_api_refused_total", "reason", reason);
  }
}
