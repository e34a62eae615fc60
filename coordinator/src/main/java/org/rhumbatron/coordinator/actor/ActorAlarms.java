package org.rhumbatron.coordinator.actor;

import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.rhumbatron.platform.db.Tx;

/**
 * The persisted alarms ({@code actor_alarms}): one per actor, {@code due_at_ms} NULL when none is
 * set. The row also keeps the day's fire count for {@link AlarmGuard}, so deleting and re-arming an
 * alarm does not reset the cap.
 */
public final class ActorAlarms {
  private final Clock clock;

  public ActorAlarms(Clock clock) {
    this.clock = clock;
  }

  /** Sets the actor's alarm to {@code due} (replacing an earlier setting), in the caller's tx. */
  public void set(Tx tx, ActorAddress address, Instant due) throws SQLException {
    tx.update(
        "INSERT INTO actor_alarms (actor_class, actor_id, due_at_ms, updated_at_ms)"
            + " VALUES (?, ?, ?, ?) ON CONFLICT (actor_class, actor_id)"
            + " DO UPDATE SET due_at_ms = excluded.due_at_ms, updated_at_ms = excluded.updated_at_ms",
        address.actorClass(),
        address.actorId(),
        due.toEpochMilli(),
        clock.millis());
  }

  /**
   * Sets the alarm to {@code due} unless one is already set at or before it; one statement, so it
   * needs no earlier read of the row.
   */
  public void setIfEarlier(Tx tx, ActorAddress address, Instant due) throws SQLException {
    tx.update(
        "INSERT INTO actor_alarms (actor_class, actor_id, due_at_ms, updated_at_ms)"
            + " VALUES (?, ?, ?, ?) ON CONFLICT (actor_class, actor_id)"
            + " DO UPDATE SET due_at_ms = excluded.due_at_ms, updated_at_ms = excluded.updated_at_ms"
            + " WHERE actor_alarms.due_at_ms IS NULL OR actor_alarms.due_at_ms > excluded.due_at_ms",
        address.actorClass(),
        address.actorId(),
        due.toEpochMilli(),
        clock.millis());
  }

  /** Deletes the alarm (keeps the row and its fire count). */
  public void delete(Tx tx, ActorAddress address) throws SQLException {
    tx.update(
        "UPDATE actor_alarms SET due_at_ms = NULL, updated_at_ms = ?"
            + " WHERE actor_class = ? AND actor_id = ?",
        clock.millis(),
        address.actorClass(),
        address.actorId());
  }

  public Optional<Instant> dueAt(Tx tx, ActorAddress address) throws SQLException {
    return tx.queryFirst(
            "SELECT due_at_ms FROM actor_alarms WHERE actor_class = ? AND actor_id = ?",
            rs -> {
              long ms = rs.getLong(1);
              return rs.wasNull() ? null : Instant.ofEpochMilli(ms);
            },
            address.actorClass(),
            address.actorId())
        .map(Optional::ofNullable)
        .orElse(Optional.empty());
  }

  /** Actors whose alarm is due at {@code now}, earliest first. */
  public List<ActorAddress> due(Tx tx, Instant now, int limit) throws SQLException {
    return tx.query(
        "SELECT actor_class, actor_id FROM actor_alarms"
            + " WHERE due_at_ms IS NOT NULL AND due_at_ms <= ? ORDER BY due_at_ms LIMIT "
            + limit,
        rs -> new ActorAddress(rs.getString(1), rs.getString(2)),
        now.toEpochMilli());
  }
}
