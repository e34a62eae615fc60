package org.rhumbatron.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * bench webhook, run small: every Agent's webhook is called once per Task, and a slow Agent holds
 * only its own wake (the others reach their Agents long before it answers).
 */
class WebhookBenchTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @TempDir Path data;

  @Test
  void tenAgentsOneSlowAndThreeLightWakesAreEachCalledOnce() throws Exception {
    Duration slowAnswer = Duration.ofSeconds(5);
    String json =
        new WebhookBench(
                nats.url(),
                data,
                data.resolve("bench.db").toString(),
                10,
                1,
                slowAnswer,
                1,
                3,
                false)
            .run();

    JsonNode out = new ObjectMapper().readTree(json);
    assertThat(out.path("bench").asText()).isEqualTo("webhook");
    JsonNode others = out.path("ready_to_webhook_other_agents_ms");
    JsonNode slow = out.path("ready_to_webhook_slow_agents_ms");
    JsonNode light = out.path("light_load_ready_to_webhook_ms");
    assertThat(others.path("samples").asInt()).isEqualTo(9);
    assertThat(slow.path("samples").asInt()).isEqualTo(1);
    assertThat(light.path("samples").asInt()).isEqualTo(3);
    for (JsonNode figure : new JsonNode[] {others, slow, light}) {
      assertThat(figure.path("p50").asDouble()).isBetween(0.0, figure.path("p99").asDouble());
    }
    // Woken in the same burst as the slow one, none waits for its answer.
    assertThat(others.path("max").asDouble()).isLessThan(slowAnswer.toMillis());
  }
}
