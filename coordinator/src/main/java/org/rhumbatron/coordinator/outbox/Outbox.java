package org.rhumbatron.coordinator.outbox;

import java.sql.SQLException;
import java.time.Clock;
import org.rhumbatron.coordinator.actor.ActorAddress;
import org.rhumbatron.platform.db.Tx;
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
          + " subject, payload, state, attempts, next_attempt_at_ms, created_at_ms)"
          + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?) ON CONFLICT DO NOTHING";

  private final EnvelopeCodec codec;
  private final Clock clock;

  public Outbox(EnvelopeCodec codec, Clock clock) {
    this.codec = codec;
    this.clock = clock;
  }

  /** Returns true when the row is new, false when the event id was there already. */
  public boolean append(Tx tx, ActorAddress actor, Event event) throws SQLException {
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
            codec.encodeEvent(event),
            now,
            now)
        == 1;
  }
}
