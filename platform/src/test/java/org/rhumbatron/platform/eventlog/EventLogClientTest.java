package org.rhumbatron.platform.eventlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.nats.client.Connection;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerInfo;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.faults.NatsStoreDamage;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;
import org.rhumbatron.testkit.nats.NatsServer;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/** The router's read side on a real nats-server; each test gets its own server. */
class EventLogClientTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  private static final int STREAM = 2;
  private final EnvelopeCodec codec = new EnvelopeCodec();
  private Connection connection;
  private JetStreamEventLog log;

  @BeforeEach
  void topology() throws Exception {
    connection = JetStreamConnections.connect(nats.url(), "test");
    new JetStreamTopology(connection.jetStreamManagement(), Settings.defaults()).ensure();
    log = JetStreamEventLog.bind(connection);
  }

  @AfterEach
  void close() throws Exception {
    connection.close();
  }

  private List<String> publish(int n) throws Exception {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Event e = event("p-log", i);
      log.publish(STREAM, e.eventId(), codec.encodeEvent(e), null).get();
      ids.add(e.eventId());
    }
    return ids;
  }

  private static Event event(String projectId, int i) {
    return Event.builder()
        .eventId(StableIds.randomEventId())
        .eventType(EventType.TASK_COMPLETED)
        .tenantId("t")
        .projectId(projectId)
        .changeId("c1")
        .taskId("t" + i)
        .actor("test")
        .correlationId("c1")
        .timestamp(Instant.parse("2026-01-01T00:00:00Z"))
        .build();
  }

  /** Fetches until {@code n} records came back, within 10 s. */
  private static List<EventRecord> fetchUntil(
      EventLogClient client, Subscription subscription, int n) {
    List<EventRecord> got = new ArrayList<>();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              got.addAll(client.fetch(STREAM, subscription, 100));
              return got.size() >= n;
            });
    return got;
  }

  /**
   * The ack floor's stream sequence in the consumer's state file, {@code obs/<durable>/o.dat}: a
   * two-byte header, then uvarints (ack floor consumer sequence, ack floor stream sequence, ...).
   */
  private static long storedAckFloor(Path streamDir, Subscription subscription) throws IOException {
    byte[] state =
        Files.readAllBytes(
            streamDir.resolve("obs").resolve(subscription.durableName()).resolve("o.dat"));
    int[] at = {2};
    uvarint(state, at); // the ack floor's consumer sequence
    return uvarint(state, at);
  }

  private static long uvarint(byte[] bytes, int[] at) {
    long value = 0;
    for (int shift = 0; ; shift += 7) {
      byte b = bytes[at[0]++];
      value |= (long) (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        return value;
      }
    }
  }

  private static final String MALFORMED_ID = "evt_0000000000000000000000000000beef";

  /** Valid JSON that is not an Event envelope. */
  private void publishMalformed() throws Exception {
    log.publish(STREAM, MALFORMED_ID, "{\"eventId\": 42}".getBytes(StandardCharsets.UTF_8), null)
        .get();
  }

  /**
   * A stream that lost its tail hands the lost sequences out again, and the server does not deliver
   * a message at a sequence its consumer has read past. The fill takes those sequences, so the next
   * Events reach that consumer, and a consumer that reads the fillers skips them.
   */
  @Test
  void afterALostTailTheNextEventsReachAConsumerThatHadReadPastTheEnd() throws Exception {
    String stream = EventStreams.streamName(STREAM);
    EventLogClient client = new EventLogClient(connection, codec, Settings.defaults());
    List<String> before = publish(10);
    fetchUntil(client, Subscription.CAUSAL_ROUTER, 10).forEach(EventRecord::ack);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                connection
                        .jetStreamManagement()
                        .getConsumerInfo(stream, Subscription.CAUSAL_ROUTER.durableName())
                        .getAckFloor()
                        .getStreamSequence()
                    == 10);
    // The kill below loses what the server has not written: wait for the stored ack floor.
    await()
        .atMost(Duration.ofSeconds(10))
        .ignoreExceptions()
        .until(
            () ->
                storedAckFloor(nats.server().streamDir(stream), Subscription.CAUSAL_ROUTER) == 10);
    connection.close();
    NatsServer server = nats.server();
    server.kill();
    assertThat(NatsStoreDamage.cutLastMessages(server.streamDir(stream), 3))
        .containsExactly(8L, 9L, 10L);
    server.restart();
    topology();
    client = new EventLogClient(connection, codec, Settings.defaults());

    // 10 is what the outbox recorded: a consumer's own state may lose its tail with the stream's.
    assertThat(log.fillReadPastSequences(STREAM, 10)).as("sequences 8..10 filled").isEqualTo(3);
    List<String> next = publish(2);
    assertThat(fetchUntil(client, Subscription.CAUSAL_ROUTER, 2))
        .extracting(r -> r.event().eventId())
        .containsExactlyElementsOf(next);

    List<String> expected = new ArrayList<>(before.subList(0, 7));
    expected.addAll(next);
    assertThat(fetchUntil(client, Subscription.PROJECT_VIEW_PROJECTOR, 9))
        .as("a new consumer reads every Event and skips the fillers")
        .extracting(r -> r.decoded() ? r.event().eventId() : "undecoded " + r.streamSequence())
        .containsExactlyElementsOf(expected);
    assertThat(log.fillReadPastSequences(STREAM, 0)).as("no consumer stands past the end").isZero();

    // A consumer's state can lose its tail too: the outbox's record of what it got counts as well.
    long last = log.lastSequence(STREAM);
    assertThat(log.fillReadPastSequences(STREAM, last + 4))
        .as("sequences the outbox recorded and the stream lost")
        .isEqualTo(4);
    publish(1);
    assertThat(log.lastSequence(STREAM)).isEqualTo(last + 5);
  }

  @Test
  void theFirstReadCreatesADurableExplicitAckConsumerWithTheSeedsAckWait() throws Exception {
    EventLogClient client = new EventLogClient(connection, codec, Settings.defaults());
    publish(1);
    assertThat(client.fetch(STREAM, Subscription.PROJECT_VIEW_PROJECTOR, 100)).hasSize(1);
    ConsumerInfo info =
        connection
            .jetStreamManagement()
            .getConsumerInfo(EventStreams.streamName(STREAM), "project-view-projector");
    assertThat(info.getConsumerConfiguration().getDurable()).isEqualTo("project-view-projector");
    assertThat(info.getConsumerConfiguration().getAckPolicy()).isEqualTo(AckPolicy.Explicit);
    assertThat(info.getConsumerConfiguration().getAckWait()).isEqualTo(Duration.ofMinutes(5));
    assertThat(info.getConsumerConfiguration().getFilterSubject())
        .isEqualTo(EventStreams.streamSubject(STREAM));
  }

  @Test
  void oneFetchReturnsAtMostOneHundredRecordsInStreamOrder() throws Exception {
    EventLogClient client = new EventLogClient(connection, codec, Settings.defaults());
    List<String> ids = publish(150);
    List<EventRecord> first = client.fetch(STREAM, Subscription.CAUSAL_ROUTER, 500);
    assertThat(first).hasSize(100);
    assertThat(first)
        .extracting(r -> r.event().eventId())
        .containsExactlyElementsOf(ids.subList(0, 100));
    first.forEach(EventRecord::ack);
    List<EventRecord> second = client.fetch(STREAM, Subscription.CAUSAL_ROUTER, 500);
    assertThat(second)
        .extracting(r -> r.event().eventId())
        .containsExactlyElementsOf(ids.subList(100, 150));
    // The subscriptions are independent: another one reads from the start.
    assertThat(client.fetch(STREAM, Subscription.AUDIT_ARCHIVER, 100)).hasSize(100);
  }

  /**
   * A consumer deleted under a running client (by an operator) leaves its pulls unanswered: the
   * fetch is empty, as from an empty stream, until ensureConsumer (the sweep) makes it again.
   */
  @Test
  void aDeletedConsumerIsMadeAgainByEnsureConsumerAndItsSubscriptionReadsIt() throws Exception {
    EventLogClient client = new EventLogClient(connection, codec, Settings.defaults());
    List<String> first = publish(2);
    fetchUntil(client, Subscription.CAUSAL_ROUTER, 2).forEach(EventRecord::ack);
    assertThat(client.ensureConsumer(STREAM, Subscription.CAUSAL_ROUTER)).isFalse();
    connection
        .jetStreamManagement()
        .deleteConsumer(EventStreams.streamName(STREAM), Subscription.CAUSAL_ROUTER.durableName());
    List<String> second = publish(3);
    assertThat(client.fetch(STREAM, Subscription.CAUSAL_ROUTER, 100)).isEmpty();

    assertThat(client.ensureConsumer(STREAM, Subscription.CAUSAL_ROUTER)).isTrue();
    List<String> all = new ArrayList<>(first);
    all.addAll(second);
    // The new durable starts at the stream's first message: the claims make the replay harmless.
    assertThat(fetchUntil(client, Subscription.CAUSAL_ROUTER, 5))
        .extracting(r -> r.event().eventId())
        .containsExactlyElementsOf(all);
    assertThat(
            connection
                .jetStreamManagement()
                .getConsumerInfo(
                    EventStreams.streamName(STREAM), Subscription.CAUSAL_ROUTER.durableName())
                .getConsumerConfiguration()
                .getAckWait())
        .as("made again with the seed's configuration")
        .isEqualTo(Duration.ofMinutes(5));
  }

  @Test
  void aStreamMadeAgainUnderTheClientIsReadAfterEnsureConsumer() throws Exception {
    EventLogClient client = new EventLogClient(connection, codec, Settings.defaults());
    publish(2);
    fetchUntil(client, Subscription.PROJECT_VIEW_PROJECTOR, 2).forEach(EventRecord::ack);
    connection.jetStreamManagement().deleteStream(EventStreams.streamName(STREAM));
    new JetStreamTopology(connection.jetStreamManagement(), Settings.defaults()).ensure();
    List<String> again = publish(3);
    assertThat(client.ensureConsumer(STREAM, Subscription.PROJECT_VIEW_PROJECTOR)).isTrue();
    assertThat(fetchUntil(client, Subscription.PROJECT_VIEW_PROJECTOR, 3))
        .extracting(r -> r.event().eventId())
        .containsExactlyElementsOf(again);
  }

  @Test
  void ensureConsumerOnAMissingStreamNamesTheStream() throws Exception {
    EventLogClient client = new EventLogClient(connection, codec, Settings.defaults());
    assertThat(client.fetch(STREAM, Subscription.AUDIT_ARCHIVER, 100)).isEmpty();
    connection.jetStreamManagement().deleteStream(EventStreams.streamName(STREAM));
    assertThatThrownBy(() -> client.ensureConsumer(STREAM, Subscription.AUDIT_ARCHIVER))
        .isInstanceOf(EventLogException.class)
        .hasMessageContaining("audit-archiver")
        .hasMessageContaining(EventStreams.streamName(STREAM))
        .hasMessageContaining("stream not found");
  }

  @Test
  void ensureConsumerLeavesAConsumerNotReadYetToItsFirstRead() throws Exception {
    EventLogClient client = new EventLogClient(connection, codec, Settings.defaults());
    assertThat(client.ensureConsumer(STREAM, Subscription.ANALYTICS_PROJECTOR)).isFalse();
    assertThat(connection.jetStreamManagement().getConsumerNames(EventStreams.streamName(STREAM)))
        .isEmpty();
    List<String> ids = publish(1);
    assertThat(client.fetch(STREAM, Subscription.ANALYTICS_PROJECTOR, 100))
        .extracting(r -> r.event().eventId())
        .containsExactlyElementsOf(ids);
  }

  /**
   * A fetch that gave up waiting (the server stalled, or nothing was there yet) leaves its pull's
   * answer to the next fetch, as first deliveries. With jnats' one-shot fetch that answer went to a
   * subscription already closed; in one of two runs of the old code the messages came back as
   * redeliveries.
   */
  @Test
  void recordsThatArriveAfterAFetchStoppedWaitingAreTheNextFetchsFirst() throws Exception {
    EventLogClient client = new EventLogClient(connection, codec, Settings.defaults());
    assertThat(client.fetch(STREAM, Subscription.CAUSAL_ROUTER, 100)).isEmpty();
    List<String> ids = publish(5);
    nats.server().pause();
    List<EventRecord> whileStalled;
    try {
      whileStalled = client.fetch(STREAM, Subscription.CAUSAL_ROUTER, 100);
    } finally {
      nats.server().resume();
    }
    // The first fetch's pull may still have been answered with them before the server stopped:
    // then the stalled fetch had them in hand already. Either way each arrives once, in order.
    List<EventRecord> after = new ArrayList<>(whileStalled);
    if (after.size() < ids.size()) {
      after.addAll(fetchUntil(client, Subscription.CAUSAL_ROUTER, ids.size() - after.size()));
    }
    assertThat(after).extracting(r -> r.event().eventId()).containsExactlyElementsOf(ids);
    assertThat(after)
        .as("the first delivery, not a redelivery after the ack wait")
        .allSatisfy(r -> assertThat(r.deliveredCount()).isEqualTo(1));
  }

  /**
   * Every full batch reaches the caller whole while other threads load the CPU. jnats' one-shot
   * fetch could close after counting the batch's last message on the reader thread and before
   * queueing it: that message stayed pending until the 5-minute ack wait.
   */
  @Test
  void everyMessageOfEveryFullBatchIsReturnedUnderLoad() throws Exception {
    EventLogClient client = new EventLogClient(connection, codec, Settings.defaults());
    byte[] body = codec.encodeEvent(event("p-load", 0));
    int total = 20_000;
    List<CompletableFuture<Long>> acks = new ArrayList<>();
    for (int i = 0; i < total; i++) {
      acks.add(log.publish(STREAM, "m-" + i, body, null));
      if (acks.size() == 500) {
        acks.forEach(CompletableFuture::join);
        acks.clear();
      }
    }
    acks.forEach(CompletableFuture::join);
    AtomicBoolean loading = new AtomicBoolean(true);
    for (int t = 0; t < 3; t++) {
      Thread spin =
          new Thread(
              () -> {
                long x = 0;
                while (loading.get()) {
                  x += System.nanoTime() % 7;
                }
                Blackhole.sink = x;
              });
      spin.setDaemon(true);
      spin.start();
    }
    int fetched = 0;
    List<Integer> shortBatches = new ArrayList<>();
    try {
      while (fetched < total) {
        List<EventRecord> batch = client.fetch(STREAM, Subscription.CAUSAL_ROUTER, 100);
        if (batch.size() < Math.min(100, total - fetched)) {
          shortBatches.add(batch.size());
        }
        batch.forEach(EventRecord::ack);
        fetched += batch.size();
        if (batch.isEmpty()) {
          break;
        }
      }
    } finally {
      loading.set(false);
    }
    assertThat(shortBatches).as("batches that came back short").isEmpty();
    assertThat(fetched).isEqualTo(total);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                connection
                        .jetStreamManagement()
                        .getConsumerInfo(EventStreams.streamName(STREAM), "causal-router")
                        .getNumAckPending()
                    == 0);
  }

  private static final class Blackhole {
    static volatile long sink;
  }

  @Test
  void aNakRedeliversAfterItsDelayAndNotBefore() throws Exception {
    EventLogClient client = new EventLogClient(connection, codec, Settings.defaults());
    publish(3);
    List<EventRecord> batch = client.fetch(STREAM, Subscription.CAUSAL_ROUTER, 100);
    batch.forEach(r -> r.nak(Duration.ofSeconds(2)));
    assertThat(client.fetch(STREAM, Subscription.CAUSAL_ROUTER, 100))
        .as("inside the delay")
        .isEmpty();
    List<EventRecord> again = fetchUntil(client, Subscription.CAUSAL_ROUTER, 3);
    assertThat(again).hasSize(3).allSatisfy(r -> assertThat(r.deliveredCount()).isEqualTo(2));
  }

  @Test
  void anUnacknowledgedBatchComesBackAfterTheAckWait() throws Exception {
    Settings shortWait = Settings.defaults().with(Settings.ROUTER_ACK_WAIT, Duration.ofSeconds(1));
    EventLogClient client = new EventLogClient(connection, codec, shortWait);
    publish(2);
    assertThat(client.fetch(STREAM, Subscription.ANALYTICS_PROJECTOR, 100)).hasSize(2);
    List<EventRecord> again = fetchUntil(client, Subscription.ANALYTICS_PROJECTOR, 2);
    assertThat(again).hasSize(2).allSatisfy(r -> assertThat(r.deliveredCount()).isEqualTo(2));
  }

  @Test
  void aMalformedEnvelopeIsAFailedRecordNotACrash() throws Exception {
    EventLogClient client = new EventLogClient(connection, codec, Settings.defaults());
    List<String> ids = publish(1);
    publishMalformed();
    List<EventRecord> batch = client.fetch(STREAM, Subscription.PROJECT_VIEW_PROJECTOR, 100);
    assertThat(batch).hasSize(2);
    assertThat(batch.get(0).decoded()).isTrue();
    assertThat(batch.get(0).event().eventId()).isEqualTo(ids.get(0));
    assertThat(batch.get(1).decoded()).isFalse();
    assertThat(batch.get(1).decodeError().field()).isNotBlank();
    assertThat(batch.get(1).messageId()).isEqualTo(MALFORMED_ID);
  }

  @Test
  void theSecondSubscriptionOfAMessageGetsTheEventDecodedByTheFirst() throws Exception {
    EventLogClient client = new EventLogClient(connection, codec, Settings.defaults());
    List<String> ids = publish(3);
    List<EventRecord> projector = client.fetch(STREAM, Subscription.PROJECT_VIEW_PROJECTOR, 100);
    assertThat(client.decodesSaved()).isZero();
    List<EventRecord> causal = client.fetch(STREAM, Subscription.CAUSAL_ROUTER, 100);
    assertThat(client.decodesSaved()).isEqualTo(3);
    for (int i = 0; i < 3; i++) {
      assertThat(causal.get(i).event()).isSameAs(projector.get(i).event());
      assertThat(causal.get(i).event().eventId()).isEqualTo(ids.get(i));
    }
  }

  @Test
  void aStreamMadeAgainIsDecodedAgainThoughItsSequencesRepeat() throws Exception {
    EventLogClient client = new EventLogClient(connection, codec, Settings.defaults());
    List<String> before = publish(2);
    assertThat(client.fetch(STREAM, Subscription.PROJECT_VIEW_PROJECTOR, 100))
        .extracting(r -> r.event().eventId())
        .containsExactlyElementsOf(before);
    connection.jetStreamManagement().deleteStream(EventStreams.streamName(STREAM));
    new JetStreamTopology(connection.jetStreamManagement(), Settings.defaults()).ensure();
    // The same client, so its decoded Events of sequences 1 and 2 are still there.
    List<String> after = publish(2);
    assertThat(client.fetch(STREAM, Subscription.CAUSAL_ROUTER, 100))
        .extracting(r -> r.event().eventId())
        .containsExactlyElementsOf(after);
    assertThat(client.decodesSaved()).isZero();
  }

  @Test
  void aMalformedEnvelopeFailsForEverySubscriptionThatReadsIt() throws Exception {
    EventLogClient client = new EventLogClient(connection, codec, Settings.defaults());
    publishMalformed();
    assertThat(client.fetch(STREAM, Subscription.PROJECT_VIEW_PROJECTOR, 100).get(0).decoded())
        .isFalse();
    assertThat(client.fetch(STREAM, Subscription.CAUSAL_ROUTER, 100).get(0).decoded()).isFalse();
    assertThat(client.decodesSaved()).isZero();
  }
}
