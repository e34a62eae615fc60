package org.rhumbatron.coordinator.outbox;

import java.sql.SQLException;
import java.time.Clock;
import org.rhumbatron.coordinator.actor.ActorAddress;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.platform.tracing.TraceContext;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;

/**
 * Appends Events to an actor's outbox inside the actor's transaction. {@code event_id} is UNIQUE
 * and the insert ignores a repeat, so a retried step that writes the same stable id adds nothing.
 */
public final class Outbox {
  private static final String APPEND =
      "INSERT INTO outbox (actor_class, actor_id, project_id, event_id, event_type, stream_index,"
          + " subject, payload, state, attempts, next_attempt_at_ms, created_at_ms, traceparent,"
          + " tracestate) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)"
          + " ON CONFLICT DO NOTHING";

  private final EnvelopeCodec codec;
  private final Clock clock;

  public Outbox(EnvelopeCodec codec, Clock clock) {
    this.codec = codec;
    this.clock = clock;
  }

  /**
   * An Event already encoded (and validated against its schema). Encoding before the transaction
   * keeps that CPU work off the database's single writer.
   */
  public record Encoded(Event event, byte[] json) {}

  public Encoded encode(Event event) {
    return new Encoded(event, codec.encodeEvent(event));
  }

  /** Returns true when the row is new, false when the event id was there already. */
  public boolean append(Tx tx, ActorAddress actor, Event event) throws SQLException {
    return append(tx, actor, encode(event), null);
  }

  /**
   * Appends an encoded Event with the trace context of the transaction that writes it (null: none),
   * which its publish sends on; true when the row is new.
   */
  public boolean append(Tx tx, ActorAddress actor, Encoded encoded, TraceContext trace)
      throws SQLException {
    Event event = encoded.event();
    int stream = EventStreams.streamIndex(event.projectId());
    long now = clock.millis();
    return tx.update(
            APPEND,
            actor.actorClass(),
            actor.actorId(),
            event.projectId(),
            event.eventId(),
            event.eventType().wireName(),
            stream,
            EventStreams.streamSubject(stream),
            encoded.json(),
            OutboxRowState.PENDING.dbName(),
            now,
            now,
            trace == null ? null : trace.traceparent(),
            trace == null ? null : trace.tracestate())
        == 1;
  }
}
