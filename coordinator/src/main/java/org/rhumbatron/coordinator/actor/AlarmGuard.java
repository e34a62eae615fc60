package org.rhumbatron.coordinator.actor;

import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.LongAdder;
import org.rhumbatron.platform.db.Tx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Limits each actor to a number of alarm fires per UTC day (the seed: 2,000). A fire over the cap
 * moves the alarm to the start of the next UTC day, logged and counted. The runtime deletes an
 * alarm that has no due work after its fire.
 */
public final class AlarmGuard {
  private static final Logger log = LoggerFactory.getLogger(AlarmGuard.class);

  /** What the guard decided for a due alarm. */
  public enum Decision {
    /** Fire now; the day's count went up by one. */
    FIRE,
    /** Over the day's cap: moved to the next UTC day. */
    CAPPED,
    /** Not due any more (deleted or moved since it was found due). */
    NOT_DUE
  }

  private final Clock clock;
  private final int firesPerDay;
  private final LongAdder capped = new LongAdder();

  public AlarmGuard(Clock clock, int firesPerDay) {
    this.clock = clock;
    this.firesPerDay = firesPerDay;
  }

  /**
   * Decides, in the caller's transaction, whether {@code address}'s alarm fires now. On FIRE the
   * alarm is consumed (due_at_ms NULL); the caller re-arms it from the actor's due work.
   */
  public Decision admit(Tx tx, ActorAddress address) throws SQLException {
    Instant now = clock.instant();
    long today = LocalDate.ofInstant(now, ZoneOffset.UTC).toEpochDay();
    var row =
        tx.queryFirst(
            "SELECT due_at_ms, fires_day, fires_count FROM actor_alarms"
                + " WHERE actor_class = ? AND actor_id = ?",
            rs -> {
              long due = rs.getLong(1);
              boolean none = rs.wasNull();
              return new long[] {none ? Long.MAX_VALUE : due, rs.getLong(2), rs.getLong(3)};
            },
            address.actorClass(),
            address.actorId());
    if (row.isEmpty() || row.get()[0] > now.toEpochMilli()) {
      return Decision.NOT_DUE;
    }
    long firesToday = row.get()[1] == today ? row.get()[2] : 0;
    if (firesToday >= firesPerDay) {
      long nextDay =
          LocalDate.ofEpochDay(today + 1).atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
      tx.update(
          "UPDATE actor_alarms SET due_at_ms = ?, updated_at_ms = ?"
              + " WHERE actor_class = ? AND actor_id = ?",
          nextDay,
          now.toEpochMilli(),
          address.actorClass(),
          address.actorId());
      capped.increment();
      log.warn(
          "alarm of {} reached {} fires on UTC day {}; it waits until {}",
          address,
          firesPerDay,
          LocalDate.ofEpochDay(today),
          Instant.ofEpochMilli(nextDay));
      return Decision.CAPPED;
    }
    tx.update(
        "UPDATE actor_alarms SET due_at_ms = NULL, fires_day = ?, fires_count = ?,"
            + " updated_at_ms = ? WHERE actor_class = ? AND actor_id = ?",
        today,
        firesToday + 1,
        now.toEpochMilli(),
        address.actorClass(),
        address.actorId());
    return Decision.FIRE;
  }

  /** How many fires the cap has moved to the next day since start. */
  public long cappedCount() {
    return capped.sum();
  }
}
