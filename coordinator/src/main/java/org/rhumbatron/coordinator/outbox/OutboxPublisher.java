package org.rhumbatron.coordinator.outbox;

import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntConsumer;
import java.util.function.Supplier;
import org.rhumbatron.coordinator.actor.ActorAddress;
import org.rhumbatron.coordinator.actor.ActorAlarms;
import org.rhumbatron.coordinator.actor.SerialExecutor;
import org.rhumbatron.platform.cluster.Duty;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.concurrent.Futures;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.platform.eventlog.ConnectionLostException;
import org.rhumbatron.platform.eventlog.EventLogException;
import org.rhumbatron.platform.eventlog.EventLogTransport;
import org.rhumbatron.platform.eventlog.PredecessorMissingException;
import org.rhumbatron.protocol.EventStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves outbox rows to the event log: {@link #publishDue} sends the waiting rows of one stream
 * {@code EVENTS_NN} (where {@code NN = fnv1a32(projectId) mod 8}) with {@code Nats-Msg-Id} =
 * eventId, at most 100 rows per project per run (the seed's cap), and moves each row along the
 * seed's state diagram ({@link OutboxRowState}).
 *
 * <p>Order: rows go out in outbox order, and a row in retry_wait holds back the later rows of its
 * actor, so the Events of one outbox reach the stream in commit order, also across a failed send
 * and its retries. While the connection is down nothing is sent and no attempt is counted: rows
 * wait, and the publisher is kicked again on reconnect. One lane per stream, so runs of a stream
 * never overlap; the 8 streams publish in parallel.
 *
 * <p>Several cores: a stream is published only by the node that holds its duty ({@link Duty}); a
 * run on another node does nothing, and every transaction that records a run's outcome passes the
 * duty's fence first and stores its epoch on the rows it marks published, so a node that lost the
 * duty records nothing (its rows stay waiting and the new holder sends them again under the same
 * msg ids, which the stream drops as repeats).
 */
public final class OutboxPublisher {
  private static final Logger log = LoggerFactory.getLogger(OutboxPublisher.class);

  /** Rows read per run of a stream (across its projects); each project still gets at most 100. */
  static final int ROWS_PER_RUN = 1_000;

  private final Database database;
  private final ActorAlarms alarms;
  private final EventLogTransport transport;
  private final StreamNudges nudges;
  private final Clock clock;
  private final int perProject;
  private final Duration publishTimeout;
  private final OutboxBackoff backoff;
  private final Lane[] lanes = new Lane[EventStreams.STREAM_COUNT];
  private final LongAdder published = new LongAdder();
  // Set while the event log recovers after a reconnect: JetStream may not answer yet, and a send
  // it refuses then is not the row's fault.
  private volatile boolean paused;
  private final LongAdder failedSends = new LongAdder();
  private final DutyOwnership ownership;
  private volatile IntConsumer foreignKicks = stream -> {};

  /**
   * What one run did; {@code recorded} completes when its outcome is committed (a run that only
   * published records it without waiting: see {@link #publishDue}).
   */
  public record PublishRun(
      int published, int retryWait, int failed, boolean more, CompletableFuture<Void> recorded) {
    static final PublishRun NOTHING =
        new PublishRun(0, 0, 0, false, CompletableFuture.completedFuture(null));
  }

  private record Row(
      long seq,
      ActorAddress actor,
      String projectId,
      String eventId,
      byte[] payload,
      String state,
      int attempts,
      long nextAttemptAtMs) {
    boolean isRetryWait() {
      return OutboxRowState.RETRY_WAIT.column().equals(state);
    }
  }

  private static final class Lane {
    final SerialExecutor serial;
    final AtomicBoolean scheduled = new AtomicBoolean();
    // The msg id of the stream's last message as this lane knows it; the next send expects it.
    // Touched only on the lane. Cleared when unsure (start, a refused send, a lost tail).
    String lastMsgId;
    volatile boolean synced;
    // True until a send after the last resync succeeded. The server knows its last msg id only
    // while that message is inside the duplicate window; if it refuses what we read back, the
    // next run sends its first message without the expectation.
    boolean justSynced;
    // Rows acknowledged whose 'published' is not committed yet: the next run skips them. Added on
    // the lane, removed by the commit of their outcome (the writer's thread).
    final Set<Long> recording = ConcurrentHashMap.newKeySet();
    final AtomicBoolean kickAfterRecord = new AtomicBoolean();
    // The commits of acknowledged rows not in yet (see recording): what settle() waits for.
    final Set<CompletableFuture<Void>> records = ConcurrentHashMap.newKeySet();
    // While a run that sent every row it read is being recorded, the rows up to its last seq are
    // all in flight: the next read starts after them. 0 when no such run is in flight.
    volatile long floor;
    // Set from a change of the stream's duty until a tail check since then: another node held the
    // stream, and a tail the server lost meanwhile must be repaired before this lane sends.
    private boolean tailUnchecked;
    private long dutyChanges;

    Lane(Executor pool, boolean tailUnchecked) {
      this.serial = new SerialExecutor(pool);
      this.tailUnchecked = tailUnchecked;
    }

    synchronized void holdForTailCheck() {
      tailUnchecked = true;
      dutyChanges++;
    }

    synchronized long dutyChanges() {
      return dutyChanges;
    }

    /** Lets the lane send again unless the duty changed hands since the check began. */
    synchronized void tailChecked(long asOf) {
      if (dutyChanges == asOf) {
        tailUnchecked = false;
      }
    }

    synchronized boolean tailUnchecked() {
      return tailUnchecked;
    }
  }

  /** The publisher's parts; see {@link OutboxPublisherWiring}. */
  public static OutboxPublisherWiring wiring() {
    return new OutboxPublisherWiring();
  }

  OutboxPublisher(OutboxPublisherWiring w) {
    this.ownership = w.ownership;
    this.database = w.database;
    this.alarms = w.alarms;
    this.transport = w.transport;
    this.nudges = w.nudges;
    this.clock = w.clock;
    Settings settings = w.settings;
    this.perProject = settings.get(Settings.OUTBOX_PUBLISH_BATCH);
    this.publishTimeout = settings.get(Settings.OUTBOX_PUBLISH_TIMEOUT);
    this.backoff =
        new OutboxBackoff(
            settings.get(Settings.OUTBOX_BACKOFF_INITIAL),
            settings.get(Settings.OUTBOX_BACKOFF_MAX),
            settings.get(Settings.OUTBOX_MAX_ATTEMPTS));
    for (int i = 0; i < lanes.length; i++) {
      // A stream this node does not hold yet is checked when it takes it over.
      lanes[i] = new Lane(w.pool, !ownership.owns(Duty.stream(i)));
    }
  }

  /**
   * Asks for a run of {@code streamIndex} soon, in process (after a commit, on reconnect). Kicks
   * coalesce: while a run is queued, more kicks add nothing; a run that starts after a kick sees
   * every row committed before it.
   */
  public void kick(int streamIndex) {
    if (!ownership.owns(Duty.stream(streamIndex))) {
      foreignKicks.accept(streamIndex); // its holder publishes it
      return;
    }
    kickHeld(streamIndex);
  }

  /** {@link #kick} when this node holds the stream, else nothing (a kick relayed from a node). */
  public void kickHeld(int streamIndex) {
    if (!ownership.owns(Duty.stream(streamIndex))) {
      return;
    }
    Lane lane = lanes[streamIndex];
    if (lane.scheduled.compareAndSet(false, true)) {
      lane.serial.execute(
          () -> {
            lane.scheduled.set(false);
            try {
              if (publishDue(streamIndex).more()) {
                kick(streamIndex);
              }
            } catch (RuntimeException e) {
              log.warn(
                  "publishing to {} failed: {}",
                  EventStreams.streamName(streamIndex),
                  e.toString());
            }
          });
    }
  }

  /**
   * Runs {@link #publishDue} on the stream's lane and completes with its result once its outcome is
   * committed (alarm path).
   */
  public CompletableFuture<PublishRun> publishDueOnLane(int streamIndex) {
    CompletableFuture<PublishRun> result = new CompletableFuture<>();
    lanes[streamIndex].serial.execute(
        () -> {
          try {
            PublishRun run = publishDue(streamIndex);
            Futures.relay(run.recorded().thenApply(v -> run), result);
          } catch (RuntimeException e) {
            result.completeExceptionally(e);
          }
        });
    return result;
  }

  /**
   * Runs {@code check} (the lost-tail repair) on the stream's lane once the runs before it are done
   * and every row they had acknowledged is committed as published, so what it reads of the stream's
   * published rows is all the stream was sent. Then the lane reads the stream's tail again and may
   * send: a stream this node took over sends nothing before this ran ({@link #holdForTailCheck}).
   *
   * @throws EventLogException when the lane does not settle within {@code wait}
   */
  public <T> T checkTail(int streamIndex, Duration wait, Supplier<T> check) {
    Lane lane = lanes[streamIndex];
    CompletableFuture<T> result = new CompletableFuture<>();
    lane.serial.execute(
        () -> {
          try {
            CompletableFuture.allOf(lane.records.toArray(CompletableFuture[]::new))
                .exceptionally(e -> null) // a failed record leaves its rows pending: settled too
                .get(wait.toMillis(), TimeUnit.MILLISECONDS);
            long asOf = lane.dutyChanges();
            T checked = check.get();
            lane.synced = false;
            lane.tailChecked(asOf);
            result.complete(checked);
          } catch (TimeoutException e) {
            result.completeExceptionally(
                new EventLogException(
                    "published rows of "
                        + EventStreams.streamName(streamIndex)
                        + " not recorded within "
                        + wait,
                    e));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            result.completeExceptionally(e);
          } catch (ExecutionException | RuntimeException e) {
            result.completeExceptionally(e);
          }
        });
    try {
      return result.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException cause) {
        throw cause;
      }
      throw e;
    }
  }

  /**
   * When this node gains or loses the stream's duty: whoever held it meanwhile may have left a tail
   * the server lost, so the stream sends nothing until the next {@link #checkTail}.
   */
  public void holdForTailCheck(int streamIndex) {
    lanes[streamIndex].holdForTailCheck();
  }

  /**
   * Where a kick of a stream another node holds goes (several cores: a {@code KickRelay} to the
   * holder); by default nowhere, and the holder's poll finds the rows.
   */
  public void forwardKicks(IntConsumer to) {
    this.foreignKicks = to;
  }

  /** Holds every send (no attempt counted) until {@link #resume}. */
  public void pause() {
    paused = true;
  }

  public void resume() {
    paused = false;
  }

  /**
   * Forgets what each lane knows of its stream's last message (after a lost-tail repair or a
   * reconnect), so the next run reads it from the server first.
   */
  public void resync() {
    for (Lane lane : lanes) {
      lane.synced = false;
    }
  }

  /** Kicks every stream that has pending or due retry_wait rows (start, reconnect). */
  public int kickAllWaiting() {
    List<Integer> streams =
        database.read(
            tx ->
                tx.query(
                    "SELECT DISTINCT stream_index FROM outbox WHERE state = 'pending'"
                        + " OR (state = 'retry_wait' AND next_attempt_at_ms <= ?)",
                    rs -> rs.getInt(1),
                    clock.millis()));
    streams.forEach(this::kickHeld); // every node polls: no need to tell the holders
    return streams.size();
  }

  /**
   * One run for one stream. Call it only on the stream's lane ({@link #kick}, {@link
   * #publishDueOnLane}) so that runs of a stream never overlap.
   */
  PublishRun publishDue(int streamIndex) {
    if (!ownership.owns(Duty.stream(streamIndex))) {
      return PublishRun.NOTHING; // another node publishes this stream
    }
    Lane lane = lanes[streamIndex];
    if (lane.tailUnchecked()) {
      return PublishRun.NOTHING; // taken over: the tail check goes first, then kicks the stream
    }
    long now = clock.millis();
    // Copied before the read: a row whose outcome commits after this copy is skipped either way,
    // one that committed before it is no longer waiting in what the read sees.
    Set<Long> recording = Set.copyOf(lane.recording);
    List<Row> rows = waitingRows(streamIndex, recording.isEmpty() ? 0 : lane.floor);
    int read = rows.size();
    if (!recording.isEmpty()) {
      rows = rows.stream().filter(r -> !recording.contains(r.seq())).toList();
    }
    if (rows.isEmpty()) {
      if (read > 0) {
        // All it read is being recorded (a full window of them may hide rows behind): run again
        // when a record is in, or now if they all are in already.
        lane.kickAfterRecord.set(true);
        if (lane.recording.isEmpty() && lane.kickAfterRecord.compareAndSet(true, false)) {
          kick(streamIndex);
        }
      }
      return PublishRun.NOTHING;
    }
    Set<ActorAddress> held = new HashSet<>();
    Map<String, Integer> sentPerProject = new HashMap<>();
    List<Row> dueRetries = new ArrayList<>();
    List<Row> unbound = new ArrayList<>();
    List<Row> sent = new ArrayList<>();
    List<CompletableFuture<Long>> acks = new ArrayList<>();
    boolean disconnected = false;
    boolean capped = false;
    boolean bound = transport.boundStreams().contains(streamIndex);
    if (bound && !lane.synced && transport.isConnected()) {
      resync(streamIndex, lane);
    }
    String expected = lane.lastMsgId;
    for (Row row : rows) {
      if (held.contains(row.actor())) {
        continue; // an earlier row of this actor waits: keep the actor's order
      }
      if (row.isRetryWait()) {
        if (row.nextAttemptAtMs() > now) {
          held.add(row.actor());
          continue;
        }
        dueRetries.add(row); // retry_wait -> pending: the backoff has passed
      }
      if (!bound) {
        unbound.add(row);
        continue;
      }
      if (paused || !transport.isConnected()) {
        disconnected = true; // nothing is sent and no attempt counted while NATS is down
        break;
      }
      if (sentPerProject.merge(row.projectId(), 1, Integer::sum) > perProject) {
        held.add(row.actor());
        capped = true;
        continue;
      }
      sent.add(row);
      acks.add(transport.publish(streamIndex, row.eventId(), row.payload(), expected));
      expected = row.eventId();
    }
    Outcome outcome = collect(sent, acks);
    if (outcome.failures.isEmpty()) {
      if (!sent.isEmpty()) {
        lane.lastMsgId = sent.get(sent.size() - 1).eventId();
        lane.justSynced = false;
      }
    } else if (lane.justSynced && outcome.firstRefused()) {
      lane.lastMsgId = null; // the server does not know the id we read back: send without it
      lane.justSynced = false;
    } else {
      lane.synced = false; // read the stream's last message again before the next send
    }
    CompletableFuture<Void> recorded = CompletableFuture.completedFuture(null);
    if (!dueRetries.isEmpty() || !unbound.isEmpty() || outcome.anyAcked() || outcome.anyCounted()) {
      if (dueRetries.isEmpty() && unbound.isEmpty() && outcome.failures.isEmpty()) {
        // Every row read went out when nothing was held back (no actor waiting for a retry, no
        // project over its cap): the next read may start after the last of them.
        boolean allSent = held.isEmpty() && sent.size() == rows.size();
        recorded = recordPublishedAsync(streamIndex, lane, sent, outcome, allSent);
      } else {
        recordOutcome(streamIndex, sent, dueRetries, unbound, outcome);
      }
    }
    int publishedNow = outcome.publishedCount();
    published.add(publishedNow);
    if (publishedNow > 0) {
      nudges.nudge(streamIndex);
    }
    if (!outcome.failures.isEmpty()) {
      failedSends.add(outcome.failures.size());
      Failure first = outcome.failures.values().iterator().next();
      log.warn(
          "{}: {} send(s) failed, first {}: {}",
          EventStreams.streamName(streamIndex),
          outcome.failures.size(),
          sent.get(first.index()).eventId(),
          first.error());
    }
    boolean more = !disconnected && outcome.failures.isEmpty() && (capped || read == ROWS_PER_RUN);
    int retrying = (int) outcome.failures.values().stream().filter(Failure::counted).count();
    return new PublishRun(publishedNow, retrying, unbound.size(), more, recorded);
  }

  /** Reads the stream's last msg id; when the stream cannot be read, sends go out unchained. */
  private void resync(int streamIndex, Lane lane) {
    try {
      long last = transport.lastSequence(streamIndex);
      lane.lastMsgId = last == 0 ? null : transport.messageIdAt(streamIndex, last).orElse(null);
      lane.synced = true;
      lane.justSynced = true;
    } catch (EventLogException e) {
      lane.lastMsgId = null; // the sends will fail or succeed on their own; try again next run
      log.warn(
          "cannot read the tail of {}: {}", EventStreams.streamName(streamIndex), e.getMessage());
    }
  }

  /** The stream's waiting rows after {@code afterSeq}, in outbox order. */
  private List<Row> waitingRows(int streamIndex, long afterSeq) {
    return database.read(
        tx ->
            tx.query(
                "SELECT seq, actor_class, actor_id, project_id, event_id, payload, state, attempts,"
                    + " next_attempt_at_ms FROM outbox WHERE stream_index = ?"
                    + " AND state IN ('pending', 'retry_wait') AND seq > ? ORDER BY seq LIMIT "
                    + ROWS_PER_RUN,
                rs ->
                    new Row(
                        rs.getLong(1),
                        new ActorAddress(rs.getString(2), rs.getString(3)),
                        rs.getString(4),
                        rs.getString(5),
                        rs.getBytes(6),
                        rs.getString(7),
                        rs.getInt(8),
                        rs.getLong(9)),
                streamIndex,
                afterSeq));
  }

  /** The first failed send of an actor in a run; later rows of that actor stay pending. */
  private record Failure(int index, String error, boolean counted) {}

  private static final class Outcome {
    final List<Long> ackedSeqs = new ArrayList<>();
    // When the PubAcks were in: the rows' published_at_ms, whenever their record commits.
    long ackedAtMs;
    boolean firstWasRefused;

    boolean firstRefused() {
      return firstWasRefused;
    }

    final Map<ActorAddress, Failure> failures = new java.util.LinkedHashMap<>();

    boolean anyAcked() {
      return ackedSeqs.stream().anyMatch(s -> s != null);
    }

    boolean anyCounted() {
      return failures.values().stream().anyMatch(Failure::counted);
    }

    int publishedCount() {
      return (int) ackedSeqs.stream().filter(s -> s != null).count();
    }
  }

  private Outcome collect(List<Row> sent, List<CompletableFuture<Long>> acks) {
    Outcome outcome = new Outcome();
    long deadline = System.nanoTime() + publishTimeout.toNanos();
    for (int i = 0; i < acks.size(); i++) {
      Long seq = null;
      String error = null;
      boolean refused = false;
      try {
        seq = acks.get(i).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (ExecutionException | TimeoutException e) {
        Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
        refused = cause instanceof PredecessorMissingException;
        if (i == 0) {
          outcome.firstWasRefused = refused;
        }
        // A drop fails the PubAck while disconnected; by now the connection may be back.
        refused |= cause instanceof ConnectionLostException;
        error = cause.getClass().getSimpleName() + ": " + cause.getMessage();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        error = "interrupted";
      }
      outcome.ackedSeqs.add(seq);
      if (error != null) {
        // A send that failed because the connection dropped, or because its predecessor is
        // missing on the stream, is not the row's fault.
        boolean counted = transport.isConnected() && !"interrupted".equals(error) && !refused;
        outcome.failures.putIfAbsent(sent.get(i).actor(), new Failure(i, error, counted));
      }
    }
    outcome.ackedAtMs = clock.millis();
    return outcome;
  }

  /**
   * A run in which every send was acknowledged (no failure, no retry due, no unbound row) records
   * its rows as published without waiting: the lane goes on to its next run while the commit waits
   * for the writer, and that run skips these rows until the commit is in. A run with anything else
   * records it all before the next run, whose holds depend on it.
   */
  private CompletableFuture<Void> recordPublishedAsync(
      int streamIndex, Lane lane, List<Row> sent, Outcome outcome, boolean allSent) {
    List<Long> seqs = sent.stream().map(Row::seq).toList();
    lane.recording.addAll(seqs);
    if (allSent) {
      lane.floor = Math.max(lane.floor, seqs.get(seqs.size() - 1));
    } else {
      lane.floor = 0; // rows held back below these: read from the start
    }
    CompletableFuture<Void> record =
        database.inTransactionAsync(
            tx -> {
              markPublished(tx, ownership.fence(tx, Duty.stream(streamIndex)), sent, outcome);
              return null;
            });
    lane.records.add(record);
    return record.whenComplete(
        (v, e) -> {
          lane.records.remove(record);
          seqs.forEach(lane.recording::remove);
          if (lane.recording.isEmpty()) {
            lane.floor = 0;
          }
          if (lane.kickAfterRecord.compareAndSet(true, false)) {
            kick(streamIndex);
          }
          if (e != null) {
            // The rows stay pending and go out again with the same msg ids (the server drops
            // the repeats); read the stream's tail first.
            lane.synced = false;
            log.warn(
                "{}: recording {} published row(s) failed: {}",
                EventStreams.streamName(streamIndex),
                seqs.size(),
                e.toString());
          }
        });
  }

  /** One write transaction with what the run did. */
  private void recordOutcome(
      int streamIndex, List<Row> sent, List<Row> dueRetries, List<Row> unbound, Outcome outcome) {
    database.inTransaction(
        tx -> {
          long epoch = ownership.fence(tx, Duty.stream(streamIndex));
          for (Row row : dueRetries) {
            tx.update("UPDATE outbox SET state = 'pending' WHERE seq = ?", row.seq());
          }
          for (Row row : unbound) {
            markFailed(
                tx,
                row,
                row.attempts(),
                "no producer binding for stream " + EventStreams.streamName(streamIndex));
          }
          markPublished(tx, epoch, sent, outcome);
          for (Failure failure : outcome.failures.values()) {
            if (failure.counted()) {
              recordFailedSend(tx, sent.get(failure.index()), failure.error());
            }
          }
          return null;
        });
  }

  private void markPublished(Tx tx, long epoch, List<Row> sent, Outcome outcome)
      throws SQLException {
    List<Object[]> rows = new ArrayList<>(sent.size());
    for (int i = 0; i < outcome.ackedSeqs.size(); i++) {
      Long seq = outcome.ackedSeqs.get(i);
      if (seq != null) {
        rows.add(new Object[] {seq, outcome.ackedAtMs, epoch, sent.get(i).seq()});
      }
    }
    tx.updateBatch(
        "UPDATE outbox SET state = 'published', stream_seq = ?, published_at_ms = ?, epoch = ?,"
            + " attempts = attempts + 1, last_error = NULL WHERE seq = ?",
        rows);
  }

  private void recordFailedSend(Tx tx, Row row, String error) throws SQLException {
    int attempts = row.attempts() + 1;
    if (backoff.isLast(attempts)) {
      markFailed(tx, row, attempts, error);
      return;
    }
    Instant next = clock.instant().plus(backoff.delayAfter(attempts));
    tx.update(
        "UPDATE outbox SET state = 'retry_wait', attempts = ?, next_attempt_at_ms = ?,"
            + " last_error = ? WHERE seq = ?",
        attempts,
        next.toEpochMilli(),
        error,
        row.seq());
    // retry_wait -> pending is the alarm's job: wake the actor when the backoff ends.
    alarms.setIfEarlier(tx, row.actor(), next);
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
   * row's next attempt. Empty when nothing waits (the alarm is then deleted). The actor's rows are
   * all on {@code streamIndex}, its project's stream: the query walks that stream's waiting rows.
   */
  public Optional<Instant> nextDue(Tx tx, ActorAddress actor, int streamIndex) throws SQLException {
    return tx.queryFirst(
            "SELECT MIN(CASE WHEN state = 'pending' THEN 0 ELSE next_attempt_at_ms END) FROM outbox"
                + " WHERE stream_index = ? AND state IN ('pending', 'retry_wait')"
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

  public long publishedCount() {
    return published.sum();
  }

  public long failedSendCount() {
    return failedSends.sum();
  }
}
