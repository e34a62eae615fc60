package org.rhumbatron.platform.eventlog;

import io.nats.client.Connection;
import io.nats.client.ConsumerContext;
import io.nats.client.FetchConsumeOptions;
import io.nats.client.FetchConsumer;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.Message;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.DeliverPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.EnvelopeException;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;

/**
 * Reads the event log for the event router: per stream and {@link Subscription}, a durable pull
 * consumer with explicit ack and the seed's ack wait (5 min), created at its first read. One {@link
 * #fetch} returns at most the seed's 100 records.
 */
public final class EventLogClient {
  private final Connection connection;
  private final JetStreamManagement jsm;
  private final EnvelopeCodec codec;
  private final int fetchBatch;
  private final Duration ackWait;
  private final Map<String, ConsumerContext> consumers = new ConcurrentHashMap<>();
  private final DecodedEvents[] decoded = new DecodedEvents[EventStreams.STREAM_COUNT];

  public EventLogClient(Connection connection, EnvelopeCodec codec, Settings settings)
      throws IOException {
    this.connection = connection;
    this.jsm = connection.jetStreamManagement();
    this.codec = codec;
    this.fetchBatch = settings.get(Settings.ROUTER_FETCH_BATCH);
    this.ackWait = settings.get(Settings.ROUTER_ACK_WAIT);
    for (int i = 0; i < decoded.length; i++) {
      decoded[i] = new DecodedEvents(DECODED_PER_STREAM);
    }
  }

  /**
   * Events decoded per stream and kept for the next subscription that fetches the same message: a
   * nudge fetches up to 2 x 100 for project-view-projector, then the same for causal-router.
   */
  static final int DECODED_PER_STREAM = 512;

  /** The consumer's configuration: durable, explicit ack, all of the stream's subject. */
  public ConsumerConfiguration consumerConfiguration(int streamIndex, Subscription subscription) {
    return ConsumerConfiguration.builder()
        .durable(subscription.durableName())
        .ackPolicy(AckPolicy.Explicit)
        .ackWait(ackWait)
        .deliverPolicy(DeliverPolicy.All)
        .filterSubject(EventStreams.streamSubject(streamIndex))
        .build();
  }

  /**
   * Fetches up to {@code max} (at most the seed's 100) records that the consumer has now, without
   * waiting for more (a nudge or sweep reads what is there; an empty fetch must not hold the run).
   */
  public List<EventRecord> fetch(int streamIndex, Subscription subscription, int max) {
    int wanted = Math.min(max, fetchBatch);
    List<EventRecord> records = new ArrayList<>();
    FetchConsumeOptions options =
        FetchConsumeOptions.builder().maxMessages(wanted).noWait().build();
    try (FetchConsumer fetch = consumer(streamIndex, subscription).fetch(options)) {
      for (Message m = fetch.nextMessage(); m != null; m = fetch.nextMessage()) {
        records.add(record(streamIndex, m));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EventLogException("interrupted while fetching " + subscription.durableName(), e);
    } catch (Exception e) {
      throw new EventLogException(
          "cannot fetch "
              + subscription.durableName()
              + " from "
              + EventStreams.streamName(streamIndex)
              + ": "
              + e.getMessage(),
          e);
    }
    return records;
  }

  private EventRecord record(int streamIndex, Message m) {
    long seq = m.metaData().streamSequence();
    Event known = decoded[streamIndex].get(seq, m.getData());
    if (known != null) {
      return new EventRecord(m, known, null);
    }
    try {
      Event event = codec.decodeEvent(m.getData());
      decoded[streamIndex].put(seq, m.getData(), event);
      return new EventRecord(m, event, null);
    } catch (EnvelopeException e) {
      return new EventRecord(m, null, e);
    }
  }

  /** How many fetched records were served from an earlier decode of the same message. */
  public long decodesSaved() {
    long n = 0;
    for (DecodedEvents d : decoded) {
      n += d.hits();
    }
    return n;
  }

  private synchronized ConsumerContext consumer(int streamIndex, Subscription subscription)
      throws IOException, JetStreamApiException {
    String key = streamIndex + "/" + subscription.durableName();
    ConsumerContext existing = consumers.get(key);
    if (existing != null) {
      return existing;
    }
    String stream = EventStreams.streamName(streamIndex);
    jsm.addOrUpdateConsumer(stream, consumerConfiguration(streamIndex, subscription));
    ConsumerContext created =
        connection.jetStream().getConsumerContext(stream, subscription.durableName());
    consumers.put(key, created);
    return created;
  }
}
