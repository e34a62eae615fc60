package org.rhumbatron.platform.jetstream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.nats.client.Connection;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.ClusterInfo;
import io.nats.client.api.Replica;
import io.nats.client.api.StreamInfo;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.bucket.BucketException;
import org.rhumbatron.platform.bucket.NatsObjectStoreBucket;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.config.SettingsException;
import org.rhumbatron.platform.jetstream.TopologyReport.Action;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.nats.NatsClusterExtension;
import org.rhumbatron.testkit.nats.NatsServer;

/**
 * {@code streams.replicas} on a real three-server cluster: the event streams, COMMANDS and the
 * object store bucket get that many copies, read back from the servers, at creation and as drift
 * correction; a count the cluster cannot hold is refused.
 */
class NatsClusterReplicasTest {
  private static final String BUCKET_STREAM = "OBJ_" + Bucket.EVIDENCE;

  @RegisterExtension static final NatsClusterExtension nats = NatsClusterExtension.of(3);
  private final SettableClock clock = new SettableClock(Instant.parse("2026-04-01T12:00:00Z"));
  private Connection connection;
  private JetStreamManagement jsm;

  @BeforeEach
  void connectToAnEmptyCluster() throws Exception {
    connection = JetStreamConnections.connect(nats.cluster().url(), "replicas-test");
    jsm = connection.jetStreamManagement();
    // The cluster answers slowly while a copy catches up after the failover test: try again.
    await()
        .atMost(Duration.ofSeconds(30))
        .ignoreExceptions()
        .until(
            () -> {
              for (String stream : jsm.getStreamNames()) {
                jsm.deleteStream(stream);
              }
              return jsm.getStreamNames().isEmpty();
            });
  }

  @AfterEach
  void disconnect() throws InterruptedException {
    connection.close();
  }

  private static Settings replicas(int n) {
    return Settings.defaults().with(Settings.STREAM_REPLICAS, n);
  }

  private static List<String> coreStreams() {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < EventStreams.STREAM_COUNT; i++) {
      out.add(EventStreams.streamName(i));
    }
    out.add(Queue.STREAM_NAME);
    out.add(BUCKET_STREAM);
    return out;
  }

  /** The servers holding {@code stream}: its leader and its current replicas, by name. */
  private List<String> holders(String stream) throws Exception {
    ClusterInfo info = jsm.getStreamInfo(stream).getClusterInfo();
    List<String> out = new ArrayList<>();
    if (info.getLeader() != null) {
      out.add(info.getLeader());
    }
    if (info.getReplicas() != null) {
      info.getReplicas().stream()
          .filter(Replica::isCurrent)
          .map(Replica::getName)
          .forEach(out::add);
    }
    return out;
  }

  private List<String> serverNames() {
    return nats.cluster().servers().stream().map(NatsServer::name).toList();
  }

  @Test
  void everyStreamAndTheBucketHaveThreeCopiesOnThreeServers() throws Exception {
    TopologyReport report = new JetStreamTopology(connection, replicas(3)).ensure();
    NatsObjectStoreBucket.open(connection, Bucket.EVIDENCE, clock, 3);

    assertThat(report.created()).hasSize(9);
    for (String stream : coreStreams()) {
      StreamInfo info = jsm.getStreamInfo(stream);
      assertThat(info.getConfiguration().getReplicas()).as(stream).isEqualTo(3);
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () ->
                  assertThat(holders(stream))
                      .as("servers holding " + stream)
                      .containsExactlyInAnyOrderElementsOf(serverNames()));
    }
    // A second start finds nothing to correct.
    assertThat(new JetStreamTopology(connection, replicas(3)).ensure().unchanged()).hasSize(9);
  }

  @Test
  void driftCorrectionRaisesOneCopyToThreeAndKeepsTheMessagesAndConsumers() throws Exception {
    new JetStreamTopology(connection, Settings.defaults()).ensure();
    NatsObjectStoreBucket.open(connection, Bucket.EVIDENCE, clock, 1)
        .put("a/b", "kept".getBytes(StandardCharsets.UTF_8));
    connection.jetStream().publish("events.03", "before".getBytes(StandardCharsets.UTF_8));
    // A durable consumer as core makes them (replicas unset: the stream's) follows the stream.
    jsm.addOrUpdateConsumer(
        "COMMANDS",
        io.nats.client.api.ConsumerConfiguration.builder()
            .durable("probe")
            .filterSubject("cmd.release")
            .build());
    for (String stream : coreStreams()) {
      assertThat(jsm.getStreamInfo(stream).getConfiguration().getReplicas())
          .as(stream)
          .isEqualTo(1);
    }

    TopologyReport report = new JetStreamTopology(connection, replicas(3)).ensure();
    Bucket bucket = NatsObjectStoreBucket.open(connection, Bucket.EVIDENCE, clock, 3);

    assertThat(report.updated()).hasSize(9);
    for (TopologyReport.StreamOutcome outcome : report.streams()) {
      assertThat(outcome.action()).isEqualTo(Action.UPDATED);
      assertThat(outcome.drift()).containsExactly(new FieldDrift("num_replicas", "1", "3"));
    }
    for (String stream : coreStreams()) {
      assertThat(jsm.getStreamInfo(stream).getConfiguration().getReplicas())
          .as(stream)
          .isEqualTo(3);
      await()
          .atMost(Duration.ofSeconds(20))
          .untilAsserted(
              () ->
                  assertThat(holders(stream))
                      .as("servers holding " + stream)
                      .containsExactlyInAnyOrderElementsOf(serverNames()));
    }
    assertThat(jsm.getStreamInfo("EVENTS_03").getStreamState().getMsgCount()).isEqualTo(1);
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(jsm.getConsumerInfo("COMMANDS", "probe").getClusterInfo().getReplicas())
                    .as("the consumer's copies besides its leader")
                    .hasSize(2));
    assertThat(bucket.get("a/b"))
        .hasValueSatisfying(b -> assertThat(b).asString().isEqualTo("kept"));
  }

  @Test
  void moreCopiesThanServersIsRefusedNamingTheSetting() {
    assertThatThrownBy(() -> new JetStreamTopology(connection, replicas(5)).ensure())
        .isInstanceOf(TopologyException.class)
        .hasMessageContaining("EVENTS_00")
        .hasMessageContaining("streams.replicas");
    assertThatThrownBy(() -> NatsObjectStoreBucket.open(connection, Bucket.EVIDENCE, clock, 5))
        .isInstanceOf(BucketException.class)
        .hasMessageContaining(Bucket.EVIDENCE);
  }

  @Test
  void aServerWithoutAClusterRefusesMoreThanOneCopyBeforeAnyStreamIsMade() throws Exception {
    try (NatsServer single = NatsServer.start();
        Connection alone = JetStreamConnections.connect(single.url(), "replicas-test-single")) {
      assertThatThrownBy(() -> new JetStreamTopology(alone, replicas(3)))
          .isInstanceOf(SettingsException.class)
          .hasMessageStartingWith("setting streams.replicas: 3 copies asked")
          .hasMessageContaining("runs without a cluster");
      assertThat(alone.jetStreamManagement().getStreamNames()).isEmpty();
      // Through a bare JetStreamManagement the server refuses, and the error names the setting.
      assertThatThrownBy(
              () -> new JetStreamTopology(alone.jetStreamManagement(), replicas(3)).ensure())
          .isInstanceOf(TopologyException.class)
          .hasMessageContaining("not supported in non-clustered mode")
          .hasMessageContaining("streams.replicas");
      assertThat(new JetStreamTopology(alone, replicas(1)).ensure().changed()).isTrue();
    }
  }

  @Test
  void theClientTakesAnyServerOfTheListAndFailsOverToAnother() throws Exception {
    String spaced =
        Stream.of(
                nats.cluster().server(0).url(),
                nats.cluster().server(1).url(),
                nats.cluster().server(2).url())
            .reduce((a, b) -> a + " , " + b)
            .orElseThrow();
    try (Connection c = JetStreamConnections.connect(spaced, "replicas-test-list")) {
      new JetStreamTopology(c, replicas(3)).ensure();
      NatsServer first = nats.cluster().serving(c);
      first.kill();
      try {
        await()
            .atMost(Duration.ofSeconds(15))
            .ignoreExceptions()
            .until(() -> nats.cluster().serving(c) != first);
        // The other two hold a copy and elect a leader; the client reads through its new server.
        await()
            .atMost(Duration.ofSeconds(15))
            .ignoreExceptions()
            .untilAsserted(
                () ->
                    assertThat(
                            c.jetStreamManagement()
                                .getStreamInfo("COMMANDS")
                                .getConfiguration()
                                .getReplicas())
                        .isEqualTo(3));
      } finally {
        nats.cluster().restart(first);
      }
    }
  }
}
