package org.rhumbatron.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nats.client.Connection;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/** bench router purges the event streams: never those of a server whose events someone keeps. */
class RouterBenchTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @TempDir Path data;

  @Test
  void refusesAServerWhoseEventStreamsHoldMessagesAndPurgesNothing() throws Exception {
    try (Connection c = JetStreamConnections.connect(nats.url(), "test")) {
      new JetStreamTopology(c.jetStreamManagement(), Settings.defaults()).ensure();
      c.jetStream().publish(EventStreams.streamSubject(3), "kept".getBytes(StandardCharsets.UTF_8));
      RouterBench bench =
          new RouterBench(nats.url(), data.resolve("bench.db").toString(), 100, 1, 1, 1, false);

      assertThatThrownBy(bench::run)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining(EventStreams.streamName(3) + " holds 1 messages and 0 consumers")
          .hasMessageContaining("--purge");
      assertThat(
              c.jetStreamManagement()
                  .getStreamInfo(EventStreams.streamName(3))
                  .getStreamState()
                  .getMsgCount())
          .isEqualTo(1);
    }
  }

  @Test
  void aRunOnAServerWithoutEventStreamsLeavesThemEmptySoTheNextRunIsNotRefused() throws Exception {
    String json =
        new RouterBench(nats.url(), data.resolve("bench.db").toString(), 200, 1, 1, 1, false).run();

    JsonNode out = new ObjectMapper().readTree(json);
    assertThat(out.path("ratio").isNumber()).isTrue();
    JsonNode overlap = out.path("resource_overlap");
    assertThat(overlap.path("active_agents").asInt()).isEqualTo(200);
    assertThat(overlap.path("per_s").asLong()).isPositive();
    // A third of the keys overlap one Agent by prefix only: Clef-flash asks the local API.
    assertThat(overlap.path("model_calls").asInt()).isEqualTo(overlap.path("events").asInt() / 3);
    assertThat(overlap.path("commands_sent").asLong()).isPositive();
    JsonNode cpu = out.path("cpu_us_per_event");
    assertThat(cpu.path("includes_nats_server").asBoolean())
        .as("the test's nats-server is a child process of this JVM")
        .isTrue();
    for (String phase : RouterBench.PHASES) {
      assertThat(cpu.path(phase).isNumber()).as(phase).isTrue();
      assertThat(cpu.path("of_which_nats_server").path(phase).asDouble())
          .as(phase + ": the server's part of the CPU")
          .isBetween(0.0, cpu.path(phase).asDouble());
      assertThat(out.path("cores_busy").path(phase).isNumber()).as(phase).isTrue();
    }
    try (Connection c = JetStreamConnections.connect(nats.url(), "test")) {
      for (int s = 0; s < EventStreams.STREAM_COUNT; s++) {
        var state =
            c.jetStreamManagement().getStreamInfo(EventStreams.streamName(s)).getStreamState();
        assertThat(state.getMsgCount()).as(EventStreams.streamName(s)).isZero();
        assertThat(state.getConsumerCount()).as(EventStreams.streamName(s)).isZero();
      }
    }
  }
}
