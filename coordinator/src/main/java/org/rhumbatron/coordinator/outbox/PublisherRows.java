package org.rhumbatron.coordinator.outbox;

import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.rhumbatron.coordinator.actor.ActorAddress;
import org.rhumbatron.coordinator.actor.ActorAlarms;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.platform.tracing.TraceContext;
import org.rhumbatron.protocol.EventStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The publisher's reads and writes of the outbox table: the waiting rows of a stream, and each
 * row's move along the seed's state diagram ({@link OutboxRowState}) once a run's sends are back.
 * The writes run in the caller's transaction, after its fence.
 */
final class PublisherRows {
  private static final Logger log = LoggerFactory.getLogger(OutboxPublisher.class);

  /** Rows read per run of a stream (across its projects); each project still gets at most 100. */
  static final int ROWS_PER_RUN = 1_000;

  private final Database database;
  private final ActorAlarms alarms;
  private final Clock clock;
  private final OutboxBackoff backoff;

  PublisherRows(Database database, ActorAlarms alarms, Clock clock, OutboxBackoff backoff) {
    this.database = database;
    this.alarms = alarms;
    this.clock = clock;
    this.backoff = backoff;
  }

  /** The stream's waiting rows after {@code afterSeq}, in outbox order, at most a run's worth. */
  List<WaitingRow> waiting(int streamIndex, long afterSeq) {
    return database.read(
        tx ->
            tx.query(
                "SELECT seq, actor_class, actor_id, project_id, event_id, payload, state, attempts,"
                    + " next_attempt_at_ms, traceparent, tracestate FROM outbox"
                    + " WHERE stream_index = ? AND "
                    + OutboxRowState.WAITING_SQL
                    + " AND seq > ? ORDER BY seq LIMIT "
                    + ROWS_PER_RUN,
                rs ->
                    new WaitingRow(
                        rs.getLong(1),
                        new ActorAddress(rs.getString(2), rs.getString(3)),
                        rs.getString(4),
                        rs.getString(5),
                        rs.getBytes(6),
                        OutboxRowState.fromDb(rs.getString(7)),
                        rs.getInt(8),
                        rs.getLong(9),
                        rs.getString(10) == null
                            ? null
                            : new TraceContext(rs.getString(10), rs.getString(11))),
                streamIndex,
                afterSeq));
  }

  /** The streams with pending rows or retry_wait rows due now. */
  List<Integer> streamsWithDueRows() {
    return database.read(
        tx ->
            tx.query(
                "SELECT DISTINCT stream_index FROM outbox WHERE "
                    + OutboxRowState.PENDING.condition()
                    + " OR ("
                    + OutboxRowState.RETRY_WAIT.condition()
                    + " AND next_attempt_at_ms <= ?)",
                rs -> rs.getInt(1),
                clock.millis()));
  }

  /** Everything a run did that is not only "published": in the caller's fenced transaction. */
  void recordRun(Tx tx, long epoch, int streamIndex, RunPlan plan, SendOutcome outcome)
      throws SQLException {
    for (WaitingRow row : plan.dueRetries()) {
      tx.update(
          "UPDATE outbox SET state = ? WHERE seq = ?", OutboxRowState.PENDING.dbName(), row.seq());
    }
    for (WaitingRow row : plan.unbound()) {
      markFailed(
          tx,
          row,
          row.attempts(),
          "no producer binding for stream " + EventStreams.streamName(streamIndex));
    }
    markPublished(tx, epoch, plan.toSend(), outcome);
    for (SendOutcome.Failure failure : outcome.failures.values()) {
      if (failure.counted()) {
        recordFailedSend(tx, plan.toSend().get(failure.index()), failure.error());
      }
    }
  }

  /** The acknowledged rows of {@code sent} to published, with their sequence and the epoch. */
  void markPublished(Tx tx, long epoch, List<WaitingRow> sent, SendOutcome outcome)
      throws SQLException {
    List<Object[]> rows = new ArrayList<>(sent.size());
    for (int i = 0; i < outcome.ackedSeqs.size(); i++) {
      Long seq = outcome.ackedSeqs.get(i);
      if (seq != null) {
        rows.add(
            new Object[] {
              OutboxRowState.PUBLISHED.dbName(), seq, outcome.ackedAtMs, epoch, sent.get(i).seq()
            });
      }
    }
    tx.updateBatch(
        "UPDATE outbox SET state = ?, stream_seq = ?, published_at_ms = ?, epoch = ?,"
            + " attempts = attempts + 1, last_error = NULL WHERE seq = ?",
        rows);
  }

  private void recordFailedSend(Tx tx, WaitingRow row, String error) throws SQLException {
    int attempts = row.attempts() + 1;
    if (backoff.isLast(attempts)) {
      markFailed(tx, row, attempts, error);
      return;
    }
    Instant next = clock.instant().plus(backoff.delayAfter(attempts));
    tx.update(
        "UPDATE outbox SET state = ?, attempts = ?, next_attempt_at_ms = ?,"
            + " last_error = ? WHERE seq = ?",
        OutboxRowState.RETRY_WAIT.dbName(),
        attempts,
        next.toEpochMilli(),
        error,
        row.seq());
    // retry_wait -> pending is the alarm's job: wake the actor when the backoff ends.
    alarms.setIfEarlier(tx, row.actor(), next);
  }

  private void markFailed(Tx tx, WaitingRow row, int attempts, String error) throws SQLException {
    tx.update(
        "UPDATE outbox SET state = ?, attempts = ?, last_error = ? WHERE seq = ?",
        OutboxRowState.FAILED.dbName(),
        attempts,
        error,
        row.seq());
    log.error("outbox row {} ({}) failed for good: {}", row.seq(), row.eventId(), error);
  }

  /**
   * When the actor's outbox next has due work: now for pending rows, else the earliest retry_wait
   * row's next attempt. Empty when nothing waits (the alarm is then deleted). The actor's rows are
   * all on {@code streamIndex}, its project's stream: the query walks that stream's waiting rows.
   */
  Optional<Instant> nextDue(Tx tx, ActorAddress actor, int streamIndex) throws SQLException {
    return tx.queryFirst(
            "SELECT MIN(CASE WHEN "
                + OutboxRowState.PENDING.condition()
                + " THEN 0 ELSE next_attempt_at_ms END) FROM outbox WHERE stream_index = ? AND "
                + OutboxRowState.WAITING_SQL
                + " AND actor_class = ? AND actor_id = ?",
            rs -> {
              long ms = rs.getLong(1);
              return rs.wasNull() ? null : Instant.ofEpochMilli(Math.max(ms, clock.millis()));
            },
            streamIndex,
            actor.actorClass(),
            actor.actorId())
        .map(Optional::ofNullable)
        .orElse(Optional.empty());
  }
}
