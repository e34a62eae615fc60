package org.rhumbatron.coordinator.outbox;

import java.time.Clock;
import java.time.Duration;
import org.rhumbatron.platform.cluster.Duty;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.cluster.OwnsEverything;
import org.rhumbatron.platform.db.BatchedPurge;
import org.rhumbatron.platform.db.Database;

/**
 * Deletes published outbox rows once they are older than the lost-tail horizon: past it nobody
 * needs their stream sequence, and the stream itself keeps the Event for 7 days. Failed rows stay
 * until an operator deals with them, and so does the newest row, which keeps seqs rising.
 */
public final class OutboxJanitor {
  /** Rows deleted per transaction at most (the seed's purge batch), so each one is short. */
  public static final int PURGE_MAX = 5_000;

  private final Database database;
  private final Clock clock;
  private final Duration keepPublished;
  private final DutyOwnership ownership;

  public OutboxJanitor(Database database, Clock clock, Duration keepPublished) {
    this(database, clock, keepPublished, OwnsEverything.single());
  }

  /** With several cores: only the holder of the sweep duty purges, through its fence. */
  public OutboxJanitor(
      Database database, Clock clock, Duration keepPublished, DutyOwnership ownership) {
    this.ownership = ownership;
    this.database = database;
    this.clock = clock;
    this.keepPublished = keepPublished;
  }

  /**
   * Deletes every published row past the horizon, {@link #PURGE_MAX} per transaction; returns how
   * many.
   */
  public long purgePublished() {
    if (!ownership.owns(Duty.SWEEP)) {
      return 0;
    }
    long before = clock.millis() - keepPublished.toMillis();
    return BatchedPurge.run(
            database,
            tx -> ownership.fence(tx, Duty.SWEEP),
            "outbox",
            // The newest row stays: SQLite gives a new row the highest seq there plus one, and
            // the project view orders an item's Events by outbox seq, so seqs must never go back.
            "state = ? AND published_at_ms < ? AND seq < (SELECT MAX(seq) FROM outbox)",
            "published_at_ms",
            PURGE_MAX,
            OutboxRowState.PUBLISHED.dbName(),
            before)
        .deleted();
  }
}
