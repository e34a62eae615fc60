package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nats.client.JetStreamManagement;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.config.SettingsException;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.testkit.nats.NatsClusterExtension;
import org.rhumbatron.testkit.nats.NatsServer;

/**
 * Core started against a three-server NATS cluster named by the setting {@code nats.url} (as {@code
 * RHUMBATRON_NATS_URL} gives it) with {@code streams.replicas=3}: every stream and the NATS bucket
 * it makes have three copies.
 */
class CoreOnNatsClusterTest {
  @RegisterExtension static final NatsClusterExtension nats = NatsClusterExtension.of(3);
  @TempDir Path data;

  @Test
  void coreOnTheClusterListMakesThreeCopiesOfEveryStreamAndTheBucket() throws Exception {
    Settings settings =
        Settings.load(
            null,
            Map.of(
                "RHUMBATRON_NATS_URL", nats.cluster().url(),
                "RHUMBATRON_STREAMS_REPLICAS", "3",
                "RHUMBATRON_BUCKET_STORE", "nats"));
    String url = CoreOptions.natsUrl(null, settings);
    assertThat(url).isEqualTo(nats.cluster().url());
    try (CoreService core =
        CoreService.start(
            new CoreConfig(url, data, data.resolve("core.db").toString(), 0, settings))) {
      JetStreamManagement jsm = core.nats().jetStreamManagement();
      List<String> streams = new ArrayList<>();
      for (int i = 0; i < EventStreams.STREAM_COUNT; i++) {
        streams.add(EventStreams.streamName(i));
      }
      streams.add(Queue.STREAM_NAME);
      streams.add("OBJ_" + Bucket.EVIDENCE);
      for (String stream : streams) {
        assertThat(jsm.getStreamInfo(stream).getConfiguration().getReplicas())
            .as(stream)
            .isEqualTo(3);
      }
    }
  }

  @Test
  void theOptionWinsOverTheSetting() {
    Settings settings = Settings.load(null, Map.of("RHUMBATRON_NATS_URL", nats.cluster().url()));
    assertThat(CoreOptions.natsUrl("nats://127.0.0.1:4999", settings))
        .isEqualTo("nats://127.0.0.1:4999");
    assertThat(CoreOptions.natsUrl(null, Settings.defaults())).isNull();
  }

  @Test
  void coreWaitingForNatsStillStopsAtACountTheServerCannotHold() throws Exception {
    Settings settings = Settings.defaults().with(Settings.STREAM_REPLICAS, 3);
    try (NatsServer single = NatsServer.start()) {
      assertThat(settings.get(Settings.NATS_WAIT_AT_START)).isTrue();
      assertThatThrownBy(
              () ->
                  CoreService.start(
                      new CoreConfig(
                          single.url(), data, data.resolve("core.db").toString(), 0, settings)))
          .isInstanceOf(SettingsException.class)
          .hasMessageStartingWith("setting streams.replicas: 3 copies asked")
          .hasMessageContaining(single.url());
    }
  }
}
