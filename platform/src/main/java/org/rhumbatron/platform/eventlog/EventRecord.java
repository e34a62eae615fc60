package org.rhumbatron.platform.eventlog;

import io.nats.client.Message;
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
  private final Event event;
  private final EnvelopeException decodeError;

  EventRecord(Message message, Event event, EnvelopeException decodeError) {
    this.message = message;
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
    return message.getHeaders() == null
        ? null
        : message.getHeaders().getFirst(org.rhumbatron.protocol.Headers.MSG_ID);
  }

  /** The trace context the message carries (its publish span's), or null. */
  public TraceContext traceContext() {
    io.nats.client.impl.Headers h = message.getHeaders();
    return h == null ? null : TraceContext.read(h::getFirst);
  }

  public long streamSequence() {
    return message.metaData().streamSequence();
  }

  /** The message body as stored in the stream (the audit archive keeps it even when malformed). */
  public byte[] data() {
    byte[] data = message.getData();
    return data == null ? new byte[0] : data.clone();
  }

  /** When the stream stored the message (server time; the same on every redelivery). */
  public Instant storedAt() {
    return message.metaData().timestamp().toInstant();
  }

  /** 1 on the first delivery. */
  public long deliveredCount() {
    return message.metaData().deliveredCount();
  }

  public void ack() {
    message.ack();
  }

  /** Asks for a redelivery after {@code delay} (the seed: a nack redelivers after 30 s). */
  public void nak(Duration delay) {
    message.nakWithDelay(delay);
  }
}
