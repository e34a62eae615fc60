package org.rhumbatron.router;

import static org.awaitility.Awaitility.await;

import io.nats.client.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.eventlog.EventLogClient;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.JetStreamEventLog;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;

/**
 * Real fetched batches for handler tests: the event streams on a test nats-server, publishes of
 * Events (or of raw bytes, for malformed envelopes) and fetches through {@link EventLogClient}.
 */
public final class EventLogFixture implements AutoCloseable {
  private final Connection connection;
  private final JetStreamEventLog log;
  private final EventLogClient client;
  private final EnvelopeCodec codec = new EnvelopeCodec();

  public EventLogFixture(String natsUrl) throws Exception {
    this(natsUrl, Settings.defaults());
  }

  /** With {@code settings} for the client, e.g. a short {@link Settings#ROUTER_ACK_WAIT}. */
  public EventLogFixture(String natsUrl, Settings settings) throws Exception {
    connection = JetStreamConnections.connect(natsUrl, "router-test");
    new JetStreamTopology(connection.jetStreamManagement(), Settings.defaults()).ensure();
    log = JetStreamEventLog.bind(connection);
    client = new EventLogClient(connection, codec, settings);
  }

  public Connection connection() {
    return connection;
  }

  public EnvelopeCodec codec() {
    return codec;
  }

  /** An Event of {@code type} in project {@code projectId} at {@code at}, with a random id. */
  public static Event event(EventType type, String projectId, Instant at) {
    Event.Builder b =
        Event.builder()
            .eventId(StableIds.randomEventId())
            .eventType(type)
            .tenantId("tenant-1")
            .projectId(projectId)
            .changeId("chg-1")
            .taskId("task-1")
            .actor("test")
            .correlationId("corr-1")
            .timestamp(at);
    if (type.kind() == EventType.Kind.RESOURCE) {
      b.resource("path:src/");
    }
    return b.build();
  }

  public void publish(int streamIndex, Event event) throws Exception {
    log.publish(streamIndex, event.eventId(), codec.encodeEvent(event), null).get();
  }

  public void publishRaw(int streamIndex, String msgId, byte[] body) throws Exception {
    log.publish(streamIndex, msgId, body, null).get();
  }

  /** Fetches until exactly {@code count} records of the subscription have come (at most 10 s). */
  public List<EventRecord> fetch(int streamIndex, Subscription subscription, int count) {
    List<EventRecord> records = new ArrayList<>();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              records.addAll(client.fetch(streamIndex, subscription, count - records.size()));
              return records.size() >= count;
            });
    return records;
  }

  /** Naks {@code records} at once and fetches their redelivery. */
  public List<EventRecord> redeliver(
      int streamIndex, Subscription subscription, List<EventRecord> records) {
    records.forEach(r -> r.nak(Duration.ofMillis(1)));
    return fetch(streamIndex, subscription, records.size());
  }

  @Override
  public void close() throws Exception {
    connection.close();
  }
}
