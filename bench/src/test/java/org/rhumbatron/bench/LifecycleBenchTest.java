package org.rhumbatron.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nats.client.Connection;
import io.nats.client.api.ConsumerConfiguration;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.testkit.nats.NatsServerExtension;
import org.rhumbatron.workload.LifecycleWorkload;

/** bench lifecycle, run small: its figures are numbers, and it leaves the server as it was. */
class LifecycleBenchTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @TempDir Path data;

  @Test
  void twoChangesOfOneProjectRunToCompletedWithRatesAndOrderedLatencies() throws Exception {
    String json =
        new LifecycleBench(
                nats.url(),
                data,
                data.resolve("bench.db").toString(),
                2,
                1,
                1,
                Duration.ZERO,
                false,
                LifecycleWorkload.Scopes.DISJOINT,
                1)
            .run();

    JsonNode out = new ObjectMapper().readTree(json);
    assertThat(out.path("bench").asText()).isEqualTo("lifecycle");
    assertThat(out.path("nodes").asInt()).isEqualTo(1);
    assertThat(out.path("changes_per_s").asDouble()).isPositive();
    assertThat(out.path("tasks_per_s").asDouble())
        .isEqualTo(
            out.path("changes_per_s").asDouble() * 20, org.assertj.core.data.Offset.offset(1.0));
    JsonNode wake = out.path("completed_to_next_wake_ms");
    // 8 of the 20 Tasks depend on others: each is one sample per Change.
    assertThat(wake.path("samples").asInt()).isEqualTo(2 * 8);
    assertLatency(wake);
    for (String stage : LifecycleBench.STAGES) {
      JsonNode s = out.path("stages_ms").path(stage);
      assertThat(s.path("p50").isNumber()).as(stage).isTrue();
      assertThat(s.path("p50").asDouble()).as(stage).isBetween(0.0, s.path("p99").asDouble());
    }
    assertThat(out.path("auto_approve").asBoolean()).isTrue();
    assertThat(out.path("verifier_duration_ms").asInt()).isZero();
    assertThat(out.path("completed_changes_per_s").asDouble())
        .isPositive()
        .isLessThanOrEqualTo(out.path("changes_per_s").asDouble());
    JsonNode created = out.path("created_to_completed_ms");
    JsonNode verifying = out.path("verifying_to_completed_ms");
    assertThat(created.path("samples").asInt()).isEqualTo(2);
    assertThat(verifying.path("samples").asInt()).isEqualTo(2);
    assertLatency(created);
    assertLatency(verifying);
    assertThat(verifying.path("max").asDouble())
        .isLessThanOrEqualTo(created.path("max").asDouble());
    // Two Changes of one Project: the one promoted second may have had a Candidate on the first
    // base, which went stale; no more than that one.
    assertThat(out.path("stale_candidates_per_round").asInt()).isBetween(0, 1);
    assertThat(out.path("rounds").path("stale_candidates")).hasSize(1);
    assertThat(out.path("conflict_review_ms").asLong()).isEqualTo(45_000);
    assertThat(out.path("conflict_review_waits_per_round").isNumber()).isTrue();
    assertThat(out.path("scopes").asText()).isEqualTo("disjoint");
    assertThat(out.path("conflict_review_waits_per_round").asInt())
        .as("Changes in folders of their own never wait for a conflict review")
        .isZero();
    assertThat(out.path("rounds").path("conflict_review_waits")).hasSize(1);
    assertThat(out.path("rounds").path("completed_changes_per_s")).hasSize(1);
    JsonNode outbox = out.path("outbox");
    assertThat(outbox.path("rows_per_round").asInt()).isPositive();
    assertThat(outbox.path("published_per_round").asInt())
        .isEqualTo(outbox.path("rows_per_round").asInt());
    assertThat(outbox.path("published_per_s").asDouble()).isPositive();
    assertLatency(outbox.path("commit_to_published_ms"));
    for (String consumer : List.of("project-view-projector", "causal-router")) {
      assertThat(out.path("router_applied_per_round").path(consumer).asInt())
          .as(consumer)
          .isEqualTo(outbox.path("rows_per_round").asInt());
    }
    JsonNode cpu = out.path("cpu_us_per_event");
    assertThat(cpu.path("includes_nats_server").asBoolean())
        .as("the test's nats-server is a child process of this JVM")
        .isTrue();
    assertThat(cpu.path("round").asDouble()).isPositive();
    assertThat(cpu.path("of_which_nats_server").asDouble())
        .isBetween(0.0, cpu.path("round").asDouble());
    assertThat(out.path("cores_busy").asDouble()).isPositive();
    assertThat(out.path("warmup_rounds").asInt()).isEqualTo(1);
    assertThat(out.path("rounds").path("changes_per_s")).hasSize(1);

    try (Connection c = JetStreamConnections.connect(nats.url(), "test")) {
      for (String stream : streams()) {
        var state = c.jetStreamManagement().getStreamInfo(stream).getStreamState();
        assertThat(state.getMsgCount()).as(stream).isZero();
        assertThat(state.getConsumerCount()).as(stream).isZero();
      }
    }
  }

  @Test
  void refusesAServerWhereACoreHasItsQueueConsumers() throws Exception {
    try (Connection c = JetStreamConnections.connect(nats.url(), "test")) {
      new JetStreamTopology(c.jetStreamManagement(), Settings.defaults()).ensure();
      c.jetStreamManagement()
          .addOrUpdateConsumer(
              Queue.STREAM_NAME, ConsumerConfiguration.builder().durable("a-core").build());
      LifecycleBench bench =
          new LifecycleBench(
              nats.url(),
              data,
              data.resolve("bench.db").toString(),
              1,
              1,
              1,
              Duration.ZERO,
              false,
              LifecycleWorkload.Scopes.SHARED,
              1);

      assertThatThrownBy(bench::run)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining(Queue.STREAM_NAME + " holds 0 messages and 1 consumers");
      assertThat(
              c.jetStreamManagement()
                  .getStreamInfo(Queue.STREAM_NAME)
                  .getStreamState()
                  .getConsumerCount())
          .isEqualTo(1);
    }
  }

  private static void assertLatency(JsonNode latency) {
    assertThat(latency.path("p50").isNumber()).isTrue();
    assertThat(latency.path("p50").asDouble()).isBetween(0.0, latency.path("p99").asDouble());
    assertThat(latency.path("p99").asDouble()).isLessThanOrEqualTo(latency.path("max").asDouble());
  }

  private static List<String> streams() {
    List<String> out = new java.util.ArrayList<>(List.of(Queue.STREAM_NAME));
    for (int s = 0; s < EventStreams.STREAM_COUNT; s++) {
      out.add(EventStreams.streamName(s));
    }
    return out;
  }
}
