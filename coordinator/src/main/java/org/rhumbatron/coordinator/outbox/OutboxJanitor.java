package org.rhumbatron.coordinator.outbox;

import java.time.Clock;
import java.time.Duration;
import org.rhumbatron.platform.db.Database;

/**
 * Deletes published outbox rows once they are older than the lost-tail horizon (DESIGN.md 5): past
 * it nobody needs their stream sequence, and the stream itself keeps the Event for 7 days. Failed
 * rows stay until an operator deals with them.
 */
public final class OutboxJanitor {
  /** Rows deleted per call at most, so one purge is a short transaction. */
  public static final int PURGE_MAX = 5_000;

  private final Database database;
  private final Clock clock;
  private final Duration keepPublished;

  public OutboxJanitor(Database database, Clock clock, Duration keepPublished) {
    this.database = database;
    this.clock = clock;
    this.keepPublished = keepPublished;
  }

  /** Returns how many rows it deleted. */
  public int purgePublished() {
    long before = clock.millis() - keepPublished.toMillis();
    return database.inTransaction(
        tx ->
            tx.update(
                tx.dialect()
                    .deleteLimited(
                        "outbox",
                        "state = 'published' AND published_at_ms < ?",
                        "published_at_ms",
                        PURGE_MAX),
                before));
  }
}
