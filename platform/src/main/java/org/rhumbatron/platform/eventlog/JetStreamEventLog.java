package org.rhumbatron.platform.eventlog;

import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.PublishOptions;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.api.MessageInfo;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsMessage;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import java.io.IOException;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.rhumbatron.platform.tracing.TraceAttributes;
import org.rhumbatron.platform.tracing.TraceContext;
import org.rhumbatron.platform.tracing.Tracing;
import org.rhumbatron.protocol.EventStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event log on JetStream: one producer binding per stream {@code EVENTS_NN} that exists on the
 * server. Publishes with {@code Nats-Msg-Id}, so the server drops a repeat inside its duplicate
 * window.
 */
public final class JetStreamEventLog implements EventLogTransport {
  private static final Logger log = LoggerFactory.getLogger(JetStreamEventLog.class);
  private static final int NO_MESSAGE = 10037;

  /** nats-server's JSStreamWrongLastMsgIDErrF. */
  private static final int WRONG_LAST_MSG_ID = 10070;

  /** nats-server's JSStreamWrongLastSequenceErrF. */
  private static final int WRONG_LAST_SEQUENCE = 10071;

  private final Connection connection;
  private final JetStream js;
  private final JetStreamManagement jsm;
  private final Set<Integer> bound;
  // Publishes still waiting for their PubAck; failed at once when the connection drops.
  private final Set<CompletableFuture<Long>> awaitingAck = ConcurrentHashMap.newKeySet();
  // Counted on the client's event thread, which delivers a drop before the reconnect after it;
  // jnats' own reconnect count goes up only after RECONNECTED was handed to the listeners.
  private final AtomicLong drops = new AtomicLong();

  private JetStreamEventLog(Connection connection, Set<Integer> bound) throws IOException {
    this.connection = connection;
    this.js = connection.jetStream();
    this.jsm = connection.jetStreamManagement();
    this.bound = Set.copyOf(bound);
    connection.addConnectionListener(
        (c, event) -> {
          if (event == ConnectionListener.Events.DISCONNECTED
              || event == ConnectionListener.Events.CLOSED) {
            drops.incrementAndGet();
            failAwaitingAcks(event);
          }
        });
  }

  /** Binds every stream of {@code EVENTS_00..07} that the server has. */
  public static JetStreamEventLog bind(Connection connection) throws IOException {
    JetStreamManagement jsm = connection.jetStreamManagement();
    Set<Integer> bound = new TreeSet<>();
    for (int i = 0; i < EventStreams.STREAM_COUNT; i++) {
      try {
        jsm.getStreamInfo(EventStreams.streamName(i));
        bound.add(i);
      } catch (JetStreamApiException e) {
        log.error("no producer binding for {}: {}", EventStreams.streamName(i), e.getMessage());
      }
    }
    return new JetStreamEventLog(connection, bound);
  }

  /** Binds exactly {@code streams} (tests use it to leave one stream without a binding). */
  public static JetStreamEventLog bindOnly(Connection connection, Set<Integer> streams)
      throws IOException {
    return new JetStreamEventLog(connection, streams);
  }

  @Override
  public Set<Integer> boundStreams() {
    return bound;
  }

  @Override
  public boolean isConnected() {
    return connection.getStatus() == Connection.Status.CONNECTED;
  }

  @Override
  public long connectionEpoch() {
    return drops.get();
  }

  @Override
  public CompletableFuture<Long> publish(
      int streamIndex, String msgId, byte[] body, String expectedLastMsgId) {
    return publish(streamIndex, msgId, body, expectedLastMsgId, EventOrigin.NONE);
  }

  /** Sends under a "publish" span of the Event's trace, whose context the message carries. */
  @Override
  public CompletableFuture<Long> publish(
      int streamIndex, String msgId, byte[] body, String expectedLastMsgId, EventOrigin origin) {
    Span span =
        Tracing.start(
            "publish",
            SpanKind.PRODUCER,
            TraceContext.parent(origin.trace()),
            Attributes.of(
                TraceAttributes.EVENT_ID,
                msgId,
                TraceAttributes.DESTINATION,
                EventStreams.streamName(streamIndex)));
    CompletableFuture<Long> ack =
        send(streamIndex, msgId, body, expectedLastMsgId, origin.outboxSeq(), span);
    ack.whenComplete(
        (seq, error) -> {
          if (error != null) {
            span.setStatus(StatusCode.ERROR, String.valueOf(error.getMessage()));
          }
          span.end();
        });
    return ack;
  }

  private CompletableFuture<Long> send(
      int streamIndex,
      String msgId,
      byte[] body,
      String expectedLastMsgId,
      Long outboxSeq,
      Span span) {
    Headers headers = new Headers().put(org.rhumbatron.protocol.Headers.MSG_ID, msgId);
    if (expectedLastMsgId != null) {
      headers.put(org.rhumbatron.protocol.Headers.EXPECTED_LAST_MSG_ID, expectedLastMsgId);
    }
    if (outboxSeq != null) {
      headers.put(org.rhumbatron.protocol.Headers.OUTBOX_SEQ, Long.toString(outboxSeq));
    }
    TraceContext sent = TraceContext.of(span);
    if (sent != null) {
      sent.writeTo((name, value) -> headers.put(name, value));
    }
    NatsMessage message =
        NatsMessage.builder()
            .subject(EventStreams.streamSubject(streamIndex))
            .headers(headers)
            .data(body)
            .build();
    CompletableFuture<Long> ack = new CompletableFuture<>();
    js.publishAsync(message)
        .whenComplete(
            (pubAck, error) -> {
              if (error == null) {
                ack.complete(pubAck.getSeqno());
              } else {
                ack.completeExceptionally(translate(error));
              }
            });
    awaitingAck.add(ack);
    ack.whenComplete((seq, error) -> awaitingAck.remove(ack));
    if (!isConnected()) { // the connection dropped before the add: the listener missed this one
      ack.completeExceptionally(connectionLost("the connection is down"));
    }
    return ack;
  }

  /**
   * The connection dropped: a publish still waiting for its PubAck fails now, while {@link
   * #isConnected} is false, so the publisher does not count it against the row. Left alone, it
   * would time out after the reconnect and count as a failed attempt. Its message may still be
   * stored (sent before the drop, or resent by the client after the reconnect); the publisher sends
   * it again and the server drops the repeat by its {@code Nats-Msg-Id}.
   */
  private void failAwaitingAcks(ConnectionListener.Events event) {
    for (CompletableFuture<Long> ack : awaitingAck) {
      ack.completeExceptionally(connectionLost("connection " + event.getEvent()));
    }
  }

  /**
   * A refused expectation becomes {@link PredecessorMissingException}; the rest stays as is. jnats
   * wraps the server's error (a {@code JetStreamApiException}) in other exceptions, so the whole
   * cause chain is searched.
   */
  static Throwable translate(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof JetStreamApiException api
          && (api.getApiErrorCode() == WRONG_LAST_MSG_ID
              || String.valueOf(api.getMessage()).contains("wrong last msg ID"))) {
        return new PredecessorMissingException(api.getMessage(), api);
      }
    }
    return error instanceof java.util.concurrent.CompletionException && error.getCause() != null
        ? error.getCause()
        : error;
  }

  private static EventLogException connectionLost(String why) {
    return new ConnectionLostException("no PubAck: " + why);
  }

  @Override
  public long lastSequence(int streamIndex) {
    try {
      return jsm.getStreamInfo(EventStreams.streamName(streamIndex))
          .getStreamState()
          .getLastSequence();
    } catch (IOException | JetStreamApiException e) {
      throw new EventLogException(
          "cannot read the state of " + EventStreams.streamName(streamIndex), e);
    }
  }

  @Override
  public long fillReadPastSequences(int streamIndex, long recordedUpTo) {
    String stream = EventStreams.streamName(streamIndex);
    try {
      long last = jsm.getStreamInfo(stream).getStreamState().getLastSequence();
      long readTo = Math.max(last, recordedUpTo);
      for (ConsumerInfo c : jsm.getConsumers(stream)) {
        readTo =
            Math.max(
                readTo,
                Math.max(
                    c.getDelivered().getStreamSequence(), c.getAckFloor().getStreamSequence()));
      }
      long filled = 0;
      while (last < readTo) {
        Headers headers = new Headers().put(org.rhumbatron.protocol.Headers.FILLER, "true");
        try {
          last =
              js.publish(
                      NatsMessage.builder()
                          .subject(EventStreams.streamSubject(streamIndex))
                          .headers(headers)
                          .data(new byte[0])
                          .build(),
                      PublishOptions.builder().expectedLastSequence(last).build())
                  .getSeqno();
          filled++;
        } catch (JetStreamApiException e) {
          if (e.getApiErrorCode() != WRONG_LAST_SEQUENCE) {
            throw e;
          }
          // Another message took the sequence: it fills it as well.
          last = jsm.getStreamInfo(stream).getStreamState().getLastSequence();
        }
      }
      if (filled > 0) {
        log.warn(
            "{} ends before where its consumers or the outbox had got to ({}): filled {} sequences",
            stream,
            readTo,
            filled);
      }
      return filled;
    } catch (IOException | JetStreamApiException e) {
      throw new EventLogException("cannot fill the sequences read past on " + stream, e);
    }
  }

  @Override
  public Optional<String> messageIdAt(int streamIndex, long seq) {
    try {
      MessageInfo info = jsm.getMessage(EventStreams.streamName(streamIndex), seq);
      Headers h = info.getHeaders();
      return Optional.ofNullable(
          h == null ? null : h.getFirst(org.rhumbatron.protocol.Headers.MSG_ID));
    } catch (JetStreamApiException e) {
      if (e.getApiErrorCode() == NO_MESSAGE || e.getErrorCode() == 404) {
        return Optional.empty();
      }
      throw new EventLogException(
          "cannot read message " + seq + " of " + EventStreams.streamName(streamIndex), e);
    } catch (IOException e) {
      throw new EventLogException(
          "cannot read message " + seq + " of " + EventStreams.streamName(streamIndex), e);
    }
  }
}
