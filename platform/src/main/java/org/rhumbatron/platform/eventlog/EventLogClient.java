package org.rhumbatron.platform.eventlog;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PullRequestOptions;
import io.nats.client.PullSubscribeOptions;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.api.DeliverPolicy;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.StreamState;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.EnvelopeException;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.Headers;

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
  private final Map<String, JetStreamSubscription> subscriptions = new ConcurrentHashMap<>();
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

  /**
   * How long a fetch waits for the server's answer to its pull; a record that comes later stays in
   * the subscription for the next fetch (it is delivered, so it is not lost; its ack wait runs).
   */
  private static final Duration PULL_ANSWER_WAIT = Duration.ofSeconds(1);

  /** JetStream's API error code for "consumer not found". */
  private static final int CONSUMER_NOT_FOUND = 10014;

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
   *
   * <p>One pull subscription per consumer lives across fetches: records that reach it after a fetch
   * stopped waiting are the next fetch's first ones. jnats' one-shot {@code ConsumerContext.fetch}
   * is not used: it can close with the last message of a full batch delivered but not handed over,
   * which then waits out the ack wait.
   */
  public List<EventRecord> fetch(int streamIndex, Subscription subscription, int max) {
    int wanted = Math.min(max, fetchBatch);
    List<EventRecord> records = new ArrayList<>(wanted);
    try {
      JetStreamSubscription sub = subscription(streamIndex, subscription);
      synchronized (sub) {
        // What reached the subscription after the last fetch stopped waiting comes first.
        for (Message m;
            records.size() < wanted && (m = sub.nextMessage((Duration) null)) != null; ) {
          add(records, streamIndex, m);
        }
        if (records.size() < wanted) {
          sub.pull(PullRequestOptions.noWait(wanted - records.size()).build());
          // Ends with the batch, or with the server's status that it holds no more now.
          for (Message m;
              records.size() < wanted && (m = sub.nextMessage(PULL_ANSWER_WAIT)) != null; ) {
            add(records, streamIndex, m);
          }
        }
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

  /**
   * Makes the consumer again when it no longer exists: deleted by an operator, or with its stream
   * when the stream was made again. The server does not answer a pull to a missing consumer: the
   * fetch waits out its 1 s and comes back empty, as from an empty stream, so without this check
   * the client would fetch nothing from it until a restart. The subscription it keeps pulls on the
   * same subject, so it reads the new consumer at once. The sweep calls this before it reads a
   * stream. A consumer this client has not read yet is left to its first read, which makes it.
   * Returns whether it made the consumer again.
   *
   * @throws EventLogException when the stream is missing or the server cannot be asked
   */
  public boolean ensureConsumer(int streamIndex, Subscription subscription) {
    if (!subscriptions.containsKey(key(streamIndex, subscription))) {
      return false; // not read yet: its first fetch makes it
    }
    String stream = EventStreams.streamName(streamIndex);
    try {
      try {
        jsm.getConsumerInfo(stream, subscription.durableName());
        return false;
      } catch (JetStreamApiException e) {
        if (e.getApiErrorCode() != CONSUMER_NOT_FOUND) {
          throw e;
        }
      }
      jsm.addOrUpdateConsumer(stream, consumerConfiguration(streamIndex, subscription));
      return true;
    } catch (IOException | JetStreamApiException e) {
      throw new EventLogException(
          "cannot check consumer "
              + subscription.durableName()
              + " of "
              + stream
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /**
   * Where a consumer of a stream stands.
   *
   * @param unread records not yet acked: never delivered ({@code num_pending}) plus delivered and
   *     not yet acked
   * @param oldestUnreadAt when the server stored the oldest of them (the clock the stream's max age
   *     drops it by; an Event's own timestamp is the writer's word, and poison lies), or null when
   *     none is unread (a consumer not made yet has the whole stream unread)
   */
  public record Backlog(long unread, Instant oldestUnreadAt) {
    public static final Backlog NONE = new Backlog(0, null);
  }

  /**
   * Each subscription's {@link Backlog} on {@code streamIndex}: one consumer listing, plus one
   * message read per consumer that is behind (the first record above its ack floor, which no ack
   * has settled yet).
   *
   * @throws EventLogException when the server cannot be asked
   */
  public Map<Subscription, Backlog> backlogs(int streamIndex) {
    String stream = EventStreams.streamName(streamIndex);
    try {
      Map<String, ConsumerInfo> byName = new HashMap<>();
      for (ConsumerInfo c : jsm.getConsumers(stream)) {
        byName.put(c.getName(), c);
      }
      StreamState state = null;
      Map<Subscription, Backlog> out = new EnumMap<>(Subscription.class);
      for (Subscription s : Subscription.values()) {
        ConsumerInfo c = byName.get(s.durableName());
        long unread;
        long from;
        if (c != null) {
          unread = c.getNumPending() + c.getNumAckPending();
          from = c.getAckFloor().getStreamSequence() + 1;
        } else {
          state = state == null ? jsm.getStreamInfo(stream).getStreamState() : state;
          unread = state.getMsgCount();
          from = state.getFirstSequence();
        }
        Instant oldest = unread == 0 ? null : timeOfFirstFrom(streamIndex, from);
        out.put(s, new Backlog(oldest == null ? 0 : unread, oldest));
      }
      return out;
    } catch (IOException | JetStreamApiException e) {
      throw new EventLogException(
          "cannot read the consumers of " + stream + ": " + e.getMessage(), e);
    }
  }

  /** When the server stored the first message at or after {@code seq}, or null when none is. */
  private Instant timeOfFirstFrom(int streamIndex, long seq) throws IOException {
    try {
      return jsm.getNextMessage(
              EventStreams.streamName(streamIndex), seq, EventStreams.streamSubject(streamIndex))
          .getTime()
          .toInstant();
    } catch (JetStreamApiException none) {
      return null; // acked meanwhile, or the stream dropped it
    }
  }

  /**
   * The records of {@code subscription}'s consumer on {@code streamIndex} that the server delivered
   * and nobody acked yet (at most {@code max}, oldest first), read by sequence straight from the
   * stream: those above the consumer's ack floor up to its last delivery. A node that takes a
   * stream over applies them at once instead of waiting out the ack wait of a holder that died with
   * them; some may have been acked out of order meanwhile, which the claims make repeats.
   *
   * @throws EventLogException when the server cannot be asked
   */
  public List<EventRecord> unacknowledged(int streamIndex, Subscription subscription, int max) {
    String stream = EventStreams.streamName(streamIndex);
    List<EventRecord> records = new ArrayList<>();
    try {
      ConsumerInfo info;
      try {
        info = jsm.getConsumerInfo(stream, subscription.durableName());
      } catch (JetStreamApiException e) {
        if (e.getApiErrorCode() == CONSUMER_NOT_FOUND) {
          return records; // never read: its first fetch reads everything
        }
        throw e;
      }
      if (info.getNumAckPending() == 0) {
        return records;
      }
      long last = info.getDelivered().getStreamSequence();
      String subject = EventStreams.streamSubject(streamIndex);
      for (long seq = info.getAckFloor().getStreamSequence() + 1;
          seq <= last && records.size() < max; ) {
        MessageInfo m;
        try {
          m = jsm.getNextMessage(stream, seq, subject);
        } catch (JetStreamApiException none) {
          break; // nothing stored from seq on: dropped by the stream's limits
        }
        if (m.getSeq() > last) {
          break;
        }
        seq = m.getSeq() + 1;
        if (m.getHeaders() != null
            && m.getHeaders().containsKey(Headers.FILLER)
            && (m.getData() == null || m.getData().length == 0)) {
          continue; // a filler: nothing to apply
        }
        records.add(storedRecord(streamIndex, m));
      }
      return records;
    } catch (IOException | JetStreamApiException e) {
      throw new EventLogException(
          "cannot read what "
              + subscription.durableName()
              + " has unacknowledged on "
              + stream
              + ": "
              + e.getMessage(),
          e);
    }
  }

  private EventRecord storedRecord(int streamIndex, MessageInfo m) {
    Instant storedAt = m.getTime().toInstant();
    Event known = decoded[streamIndex].get(m.getSeq(), m.getData());
    if (known != null) {
      return new EventRecord(m.getHeaders(), m.getData(), m.getSeq(), storedAt, known, null);
    }
    try {
      Event event = codec.decodeEvent(m.getData());
      return new EventRecord(m.getHeaders(), m.getData(), m.getSeq(), storedAt, event, null);
    } catch (EnvelopeException e) {
      return new EventRecord(m.getHeaders(), m.getData(), m.getSeq(), storedAt, null, e);
    }
  }

  /** Adds the record of {@code m}; a filler (see {@link Headers#FILLER}) is acked and skipped. */
  private void add(List<EventRecord> records, int streamIndex, Message m) {
    if (isFiller(m)) {
      m.ack();
      return;
    }
    records.add(record(streamIndex, m));
  }

  static boolean isFiller(Message m) {
    return m.hasHeaders()
        && m.getHeaders().containsKey(Headers.FILLER)
        && (m.getData() == null || m.getData().length == 0);
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

  private static String key(int streamIndex, Subscription subscription) {
    return streamIndex + "/" + subscription.durableName();
  }

  /** The consumer's pull subscription, creating the durable consumer at its first read. */
  private synchronized JetStreamSubscription subscription(
      int streamIndex, Subscription subscription) throws IOException, JetStreamApiException {
    String key = key(streamIndex, subscription);
    JetStreamSubscription existing = subscriptions.get(key);
    if (existing != null) {
      return existing;
    }
    String stream = EventStreams.streamName(streamIndex);
    jsm.addOrUpdateConsumer(stream, consumerConfiguration(streamIndex, subscription));
    JetStreamSubscription created =
        connection
            .jetStream()
            .subscribe(
                EventStreams.streamSubject(streamIndex),
                PullSubscribeOptions.fastBind(stream, subscription.durableName()));
    subscriptions.put(key, created);
    return created;
  }
}
