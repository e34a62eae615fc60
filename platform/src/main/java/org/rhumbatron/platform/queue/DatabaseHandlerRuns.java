package org.rhumbatron.platform.queue;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.protocol.Queue;

/**
 * {@link HandlerRuns} in {@code queue_handler_runs}: one row per redelivered message, so the count
 * survives a core kill. First deliveries write nothing, so the hot path stays free of writes.
 */
public final class DatabaseHandlerRuns implements HandlerRuns {
  private static final String COUNT =
      "INSERT INTO queue_handler_runs (queue, stream_seq, runs, updated_at_ms) VALUES (?, ?, 1, ?)"
          + " ON CONFLICT (queue, stream_seq) DO UPDATE SET runs = queue_handler_runs.runs + 1,"
          + " updated_at_ms = excluded.updated_at_ms";
  private static final String RUNS =
      "SELECT runs FROM queue_handler_runs WHERE queue = ? AND stream_seq = ?";
  private static final String FORGET =
      "DELETE FROM queue_handler_runs WHERE queue = ? AND stream_seq = ?";
  private static final String PURGE =
      "DELETE FROM queue_handler_runs WHERE queue = ? AND updated_at_ms < ?";

  private final Database database;
  private final Clock clock;
  private final Duration keep;

  /**
   * @param keep how long a message can stay in {@code COMMANDS} (its max age): older rows are
   *     purged
   */
  public DatabaseHandlerRuns(Database database, Clock clock, Duration keep) {
    this.database = Objects.requireNonNull(database, "database");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.keep = Objects.requireNonNull(keep, "keep");
  }

  @Override
  public long countRun(Queue queue, long streamSequence, long serverDeliveredCount) {
    if (serverDeliveredCount <= 1) {
      return 1;
    }
    long now = clock.millis();
    long redeliveries =
        database.inTransaction(
            tx -> {
              tx.update(COUNT, queue.wireName(), streamSequence, now);
              return tx.queryLong(RUNS, queue.wireName(), streamSequence);
            });
    return 1 + redeliveries;
  }

  @Override
  public void settled(Queue queue, long streamSequence) {
    database.inTransaction(tx -> tx.update(FORGET, queue.wireName(), streamSequence));
  }

  @Override
  public void purgeExpired(Queue queue) {
    long before = clock.millis() - keep.toMillis();
    database.inTransaction(tx -> tx.update(PURGE, queue.wireName(), before));
  }
}
