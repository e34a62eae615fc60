package org.rhumbatron.coordinator.outbox;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.rhumbatron.coordinator.actor.ActorAddress;
import org.rhumbatron.coordinator.actor.ActorAlarms;
import org.rhumbatron.coordinator.actor.SerialExecutor;
import org.rhumbatron.platform.eventlog.EventLogTransport;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.EventStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves an actor's outbox rows to the event log: {@link #publishDue} sends at most 100 rows (the
 * seed's cap) in outbox order to stream {@code fnv1a32(projectId) mod 8} with {@code Nats-Msg-Id}
 * = eventId, and moves each row along the seed's state diagram ({@link OutboxRowState}).
 *
 * <p>Order: a row in retry_wait holds back the actor's later rows, so the Events of one outbox
 * reach the stream in commit order, also across a failed send and its retries. While the
 * connection is down nothing is sent and no attempt is counted: rows wait, and the publisher is
 * kicked again on reconnect. Runs for one actor never overlap (one lane per actor).
 */
public final class OutboxPublisher {
  private static final Logger log = LoggerFactory.getLogger(OutboxPublisher.class);

  private final Database database;
  private final ActorAlarms alarms;
  private final EventLogTransport transport;
  private final StreamNudges nudges;
  private final Clock clock;
  private final Executor pool;
  private final int batch;
  private final Duration publishTimeout;
  private final OutboxBackoff backoff;
  private final Map<ActorAddress, Lane> lanes = new ConcurrentHashMap<>();
  private final LongAdder published = new LongAdder();
  private final LongAdder failedSends = new LongAdder();

  /** What one run did. */
  public record PublishRun(int published, int retryWait, int failed, boolean more) {
    static final PublishRun NOTHING = new PublishRun(0, 0, 0, false);
  }

  private record Row(
      long seq,
      String eventId,
      int streamIndex,
      byte[] payload,
      String state,
      int attempts,
      long nextAttemptAtMs) {
    boolean isRetryWait() {
      return OutboxRowState.RETRY_WAIT.column().equals(state);
    }

    Row asPending() {
      return new Row(seq, eventId, streamIndex, payload, OutboxRowState.PENDING.column(), attempts, nextAttemptAtMs);
    }
  }

  private static final class Lane {
    final SerialExecutor serial;
    final AtomicBoolean scheduled = new AtomicBoolean();

    Lane(Executor pool) {
      this.serial = new SerialExecutor(pool);
    }
  }

  public OutboxPublisher(
      Database database,
      ActorAlarms alarms,
      EventLogTransport transport,
      StreamNudges nudges,
      Clock clock,
      Settings settings,
      Executor pool) {
    this.database = database;
    this.alarms = alarms;
    this.transport = transport;
    this.nudges = nudges;
    this.clock = clock;
    this.pool = pool;
    this.batch = settings.get(Settings.OUTBOX_PUBLISH_BATCH);
    this.publishTimeout = settings.get(Settings.OUTBOX_PUBLISH_TIMEOUT);
    this.backoff =
        new OutboxBackoff(
            settings.get(Settings.OUTBOX_BACKOFF_INITIAL),
            settings.get(Settings.OUTBOX_BACKOFF_MAX),
            settings.get(Settings.OUTBOX_MAX_ATTEMPTS));
  }

  public OutboxBackoff backoff() {
    return backoff;
  }

  /**
   * Asks for a run for {@code actor} soon, in process (after a commit, on reconnect). Kicks
   * coalesce: while a run is queued, more kicks add nothing; a run that starts after a kick sees
   * every row committed before it.
   */
  public void kick(ActorAddress actor) {
    Lane lane = lanes.computeIfAbsent(actor, a -> new Lane(pool));
    if (lane.scheduled.compareAndSet(false, true)) {
      lane.serial.execute(
          () -> {
            lane.scheduled.set(false);
            try {
              if (publishDue(actor).more()) {
                kick(actor);
              }
            } catch (RuntimeException e) {
              log.warn("publishing the outbox of {} failed: {}", actor, e.toString());
            }
          });
    }
  }

  /** Runs {@link #publishDue} on the actor's lane and completes with its result (the alarm path). */
  public CompletableFuture<PublishRun> publishDueOnLane(ActorAddress actor) {
    Lane lane = lanes.computeIfAbsent(actor, a -> new Lane(pool));
    CompletableFuture<PublishRun> result = new CompletableFuture<>();
    lane.serial.execute(
        () -> {
          try {
            result.complete(publishDue(actor));
          } catch (RuntimeException e) {
            result.completeExceptionally(e);
          }
        });
    return result;
  }

  /** Kicks every actor that has pending or due retry_wait rows (start, reconnect). */
  public int kickAllWaiting() {
    List<ActorAddress> actors =
        database.read(
            tx ->
                tx.query(
                    "SELECT DISTINCT actor_class, actor_id FROM outbox"
                        + " WHERE state = 'pending' OR (state = 'retry_wait' AND next_attempt_at_ms <= ?)",
                    rs -> new ActorAddress(rs.getString(1), rs.getString(2)),
                    clock.millis()));
    actors.forEach(this::kick);
    return actors.size();
  }

  /**
   * One run for one actor. Call it only on the actor's lane ({@link #kick}, {@link
   * #publishDueOnLane}) so that runs of one actor never overlap.
   */
  PublishRun publishDue(ActorAddress actor) {
    long now = clock.millis();
    // A read first: the write lock is taken only for the outcome, and for the rare due retry_wait.
    List<Row> rows =
        database.read(
            tx ->
                tx.query(
                    "SELECT seq, event_id, stream_index, payload, state, attempts, next_attempt_at_ms"
                        + " FROM outbox WHERE actor_class = ? AND actor_id = ?"
                        + " AND state IN ('pending', 'retry_wait') ORDER BY seq LIMIT "
                        + batch,
                    rs ->
                        new Row(
                            rs.getLong(1),
                            rs.getString(2),
                            rs.getInt(3),
                            rs.getBytes(4),
                            rs.getString(5),
                            rs.getInt(6),
                            rs.getLong(7)),
                    actor.actorClass(),
                    actor.actorId()));
    if (!rows.isEmpty() && rows.get(0).isRetryWait() && rows.get(0).nextAttemptAtMs() <= now) {
      // retry_wait -> pending: the backoff has passed.
      database.inTransaction(
          tx ->
              tx.update(
                  "UPDATE outbox SET state = 'pending' WHERE actor_class = ? AND actor_id = ?"
                      + " AND state = 'retry_wait' AND next_attempt_at_ms <= ?",
                  actor.actorClass(),
                  actor.actorId(),
                  now));
      rows = rows.stream().map(r -> r.isRetryWait() && r.nextAttemptAtMs() <= now ? r.asPending() : r).toList();
    }
    if (rows.isEmpty()) {
      return PublishRun.NOTHING;
    }
    List<Row> sent = new ArrayList<>();
    List<CompletableFuture<Long>> acks = new ArrayList<>();
    List<Row> unbound = new ArrayList<>();
    boolean stopped = false;
    for (Row row : rows) {
      if (row.isRetryWait() || !transport.isConnected()) {
        stopped = true; // head of line waits, or NATS is down: later rows wait behind it
        break;
      }
      if (!transport.boundStreams().contains(row.streamIndex())) {
        unbound.add(row);
        continue;
      }
      sent.add(row);
      acks.add(transport.publish(row.streamIndex(), row.eventId(), row.payload()));
    }
    Outcome outcome = collect(sent, acks);
    boolean anyAcked = outcome.ackedSeqs.stream().anyMatch(seq -> seq != null);
    boolean countFailure = outcome.firstFailure >= 0 && outcome.countAttempt;
    if (!unbound.isEmpty() || anyAcked || countFailure) {
      recordOutcome(actor, sent, unbound, outcome);
    }
    int publishedNow = (int) outcome.ackedSeqs.stream().filter(seq -> seq != null).count();
    published.add(publishedNow);
    if (publishedNow > 0) {
      nudges.nudge(sent.get(0).streamIndex());
    }
    if (outcome.firstFailure >= 0) {
      failedSends.increment();
      log.warn(
          "outbox of {}: send of {} failed: {}",
          actor,
          sent.get(outcome.firstFailure).eventId(),
          outcome.error);
    }
    boolean more = rows.size() == batch && !stopped && outcome.firstFailure < 0;
    return new PublishRun(publishedNow, countFailure ? 1 : 0, unbound.size(), more);
  }

  /** One write transaction with what the run did: published rows, a failed send, unbound rows. */
  private void recordOutcome(ActorAddress actor, List<Row> sent, List<Row> unbound, Outcome outcome) {
    long now = clock.millis();
    database.inTransaction(
        tx -> {
          for (Row row : unbound) {
            markFailed(
                tx,
                row,
                row.attempts(),
                "no producer binding for stream " + EventStreams.streamName(row.streamIndex()));
          }
          try (PreparedStatement ps =
              tx.connection()
                  .prepareStatement(
                      "UPDATE outbox SET state = 'published', stream_seq = ?, published_at_ms = ?,"
                          + " attempts = attempts + 1, last_error = NULL WHERE seq = ?")) {
            for (int i = 0; i < outcome.ackedSeqs.size(); i++) {
              Long seq = outcome.ackedSeqs.get(i);
              if (seq != null) {
                ps.setLong(1, seq);
                ps.setLong(2, now);
                ps.setLong(3, sent.get(i).seq());
                ps.addBatch();
              }
            }
            ps.executeBatch();
          }
          if (outcome.firstFailure >= 0 && outcome.countAttempt) {
            Row row = sent.get(outcome.firstFailure);
            int attempts = row.attempts() + 1;
            if (backoff.isLast(attempts)) {
              markFailed(tx, row, attempts, outcome.error);
            } else {
              Instant next = clock.instant().plus(backoff.delayAfter(attempts));
              tx.update(
                  "UPDATE outbox SET state = 'retry_wait', attempts = ?, next_attempt_at_ms = ?,"
                      + " last_error = ? WHERE seq = ?",
                  attempts,
                  next.toEpochMilli(),
                  outcome.error,
                  row.seq());
              // retry_wait -> pending is the alarm's job: wake the actor when the backoff ends.
              alarms.setIfEarlier(tx, actor, next);
            }
          }
          return null;
        });
  }

  private static final class Outcome {
    final List<Long> ackedSeqs = new ArrayList<>();
    int firstFailure = -1;
    String error;
    boolean countAttempt = true;
  }

  private Outcome collect(List<Row> sent, List<CompletableFuture<Long>> acks) {
    Outcome outcome = new Outcome();
    long deadline = System.nanoTime() + publishTimeout.toNanos();
    for (int i = 0; i < acks.size(); i++) {
      Long seq = null;
      try {
        long wait = Math.max(0, deadline - System.nanoTime());
        seq = acks.get(i).get(wait, TimeUnit.NANOSECONDS);
      } catch (ExecutionException | TimeoutException e) {
        if (outcome.firstFailure < 0) {
          outcome.firstFailure = i;
          Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
          outcome.error = cause.getClass().getSimpleName() + ": " + cause.getMessage();
          // A send that failed because the connection dropped is not the row's fault.
          outcome.countAttempt = transport.isConnected();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        if (outcome.firstFailure < 0) {
          outcome.firstFailure = i;
          outcome.error = "interrupted";
          outcome.countAttempt = false;
        }
      }
      outcome.ackedSeqs.add(seq);
    }
    return outcome;
  }

  private void markFailed(Tx tx, Row row, int attempts, String error) throws SQLException {
    tx.update(
        "UPDATE outbox SET state = 'failed', attempts = ?, last_error = ? WHERE seq = ?",
        attempts,
        error,
        row.seq());
    log.error("outbox row {} ({}) failed for good: {}", row.seq(), row.eventId(), error);
  }

  /**
   * When the actor's outbox next has due work: now for pending rows, else the earliest retry_wait
   * row's next attempt. Empty when nothing waits (the alarm is then deleted).
   */
  public Optional<Instant> nextDue(Tx tx, ActorAddress actor) throws SQLException {
    return tx.queryFirst(
            "SELECT MIN(CASE WHEN state = 'pending' THEN 0 ELSE next_attempt_at_ms END) FROM outbox"
                + " WHERE actor_class = ? AND actor_id = ? AND state IN ('pending', 'retry_wait')",
            rs -> {
              long ms = rs.getLong(1);
              return rs.wasNull() ? null : Instant.ofEpochMilli(Math.max(ms, clock.millis()));
            },
            actor.actorClass(),
            actor.actorId())
        .map(Optional::ofNullable)
        .orElse(Optional.empty());
  }

  public long publishedCount() {
    return published.sum();
  }

  public long failedSendCount() {
    return failedSends.sum();
  }
}
