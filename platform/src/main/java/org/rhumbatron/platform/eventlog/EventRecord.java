package org.rhumbatron.platform.eventlog;

import io.nats.client.Message;
import io.nats.client.impl.Headers;
import java.time.Duration;
import java.time.Instant;
import org.rhumbatron.platform.tracing.TraceContext;
import org.rhumbatron.protocol.EnvelopeException;
import org.rhumbatron.protocol.Event;

/**
 * One record of a fetched batch: the decoded Event, or the reason it does not decode (a malformed
 * envelope is handed to the consumer as a failed record, never dropped and never a crash).
 */
public final class EventRecord {
  private final Message message;
  private final Headers headers;
  private final byte[] data;
  private final long streamSequence;
  private final Instant storedAt;
  private final Event event;
  private final EnvelopeException decodeError;

  EventRecord(Message message, Event event, EnvelopeException decodeError) {
    this.message = message;
    this.headers = message.getHeaders();
    this.data = message.getData();
    this.streamSequence = message.metaData().streamSequence();
    this.storedAt = message.metaData().timestamp().toInstant();
    this.event = event;
    this.decodeError = decodeError;
  }

  /**
   * A record read by sequence straight from the stream ({@link EventLogClient#unacknowledged}):
   * delivered to another node that never acked it. It has no delivery of its own here, so {@link
   * #ack} and {@link #nak} do nothing; the server's redelivery settles it later, and the claims
   * make that redelivery a repeat.
   */
  EventRecord(
      Headers headers,
      byte[] data,
      long streamSequence,
      Instant storedAt,
      Event event,
      EnvelopeException decodeError) {
    this.message = null;
    this.headers = headers;
    this.data = data;
    this.streamSequence = streamSequence;
    this.storedAt = storedAt;
    this.event = event;
    this.decodeError = decodeError;
  }

  /** The Event, or null when the envelope did not decode ({@link #decodeError}). */
  public Event event() {
    return event;
  }

  public EnvelopeException decodeError() {
    return decodeError;
  }

  public boolean decoded() {
    return event != null;
  }

  /** The {@code Nats-Msg-Id} header (the event id as published), or null. */
  public String messageId() {
    return headers == null ? null : headers.getFirst(org.rhumbatron.protocol.Headers.MSG_ID);
  }

  /** The trace context the message carries (its publish span's), or null. */
  public TraceContext traceContext() {
    return headers == null ? null : TraceContext.read(headers::getFirst);
  }

  public long streamSequence() {
    return streamSequence;
  }

  /**
   * The seq of the outbox row the Event was published from ({@link
   * org.rhumbatron.protocol.Headers#OUTBOX_SEQ}), or null when the message carries none (published
   * by hand, or before the header existed).
   */
  public Long outboxSeq() {
    String value =
        headers == null ? null : headers.getFirst(org.rhumbatron.protocol.Headers.OUTBOX_SEQ);
    if (value == null) {
      return null;
    }
    try {
      return Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      return null; // a header no publisher of ours wrote: no order
    }
  }

  /** The message body as stored in the stream (the audit archive keeps it even when malformed). */
  public byte[] data() {
    return data == null ? new byte[0] : data.clone();
  }

  /** When the stream stored the message (server time; the same on every redelivery). */
  public Instant storedAt() {
    return storedAt;
  }

  /**
   * 1 on the first delivery. A record read from the stream for a node that took the stream over
   * counts as redelivered (2): another node had it first.
   */
  public long deliveredCount() {
    return message == null ? 2 : message.metaData().deliveredCount();
  }

  /** Whether this record was read from the stream for a takeover, with no delivery to settle. */
  public boolean readFromStream() {
    return message == null;
  }

  public void ack() {
    if (message != null) {
      message.ack();
    }
  }

  /** Asks for a redelivery after {@code delay} (the seed: a nack redelivers after 30 s). */
  public void nak(Duration delay) {
    if (message != null) {
      message.nakWithDelay(delay);
    }
  }
}
