package org.rhumbatron.coordinator.outbox;

import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntConsumer;
import java.util.function.Supplier;
import org.rhumbatron.coordinator.actor.ActorAddress;
import org.rhumbatron.platform.cluster.Duty;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.concurrent.Futures;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.platform.eventlog.EventLogException;
import org.rhumbatron.platform.eventlog.EventLogTransport;
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

  private final Database database;
  private final PublisherRows rows;
  private final EventLogTransport transport;
  private final StreamNudges nudges;
  private final Clock clock;
  private final int perProject;
  private final Duration publishTimeout;
  private final PublishLane[] lanes = new PublishLane[EventStreams.STREAM_COUNT];
  private final LongAdder published = new LongAdder();
  // Set while the event log recovers after a reconnect: JetStream may not answer yet, and a send
  // it refuses then is not the row's fault.
  private volatile boolean paused;
  // The connection epoch the last lost-tail check ran under; sends wait while it is another.
  private volatile long checkedEpoch;
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

  /** The publisher's parts; see {@link OutboxPublisherWiring}. */
  public static OutboxPublisherWiring wiring() {
    return new OutboxPublisherWiring();
  }

  OutboxPublisher(OutboxPublisherWiring w) {
    this.ownership = w.ownership;
    this.database = w.database;
    this.transport = w.transport;
    this.checkedEpoch = w.transport.connectionEpoch();
    this.nudges = w.nudges;
    this.clock = w.clock;
    Settings settings = w.settings;
    this.perProject = settings.get(Settings.OUTBOX_PUBLISH_BATCH);
    this.publishTimeout = settings.get(Settings.OUTBOX_PUBLISH_TIMEOUT);
    this.rows =
        new PublisherRows(
            w.database,
            w.alarms,
            w.clock,
            new OutboxBackoff(
                settings.get(Settings.OUTBOX_BACKOFF_INITIAL),
                settings.get(Settings.OUTBOX_BACKOFF_MAX),
                settings.get(Settings.OUTBOX_MAX_ATTEMPTS)));
    for (int i = 0; i < lanes.length; i++) {
      // A stream this node does not hold yet is checked when it takes it over.
      lanes[i] = new PublishLane(w.pool, !ownership.owns(Duty.stream(i)));
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
    PublishLane lane = lanes[streamIndex];
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
    return lanes[streamIndex].checkTail(EventStreams.streamName(streamIndex), wait, check);
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
    resume(transport.connectionEpoch());
  }

  /**
   * Lets sends go on, on a connection that came back at most {@code checkedEpoch} times: the
   * lost-tail check read it before it looked at the streams, so a drop during the check keeps the
   * sends held until the next one.
   */
  public void resume(long checkedEpoch) {
    this.checkedEpoch = checkedEpoch;
    paused = false;
  }

  /**
   * Forgets what each lane knows of its stream's last message (after a lost-tail repair or a
   * reconnect), so the next run reads it from the server first.
   */
  public void resync() {
    for (PublishLane lane : lanes) {
      lane.synced = false;
    }
  }

  /** Kicks every stream that has pending or due retry_wait rows (start, reconnect). */
  public int kickAllWaiting() {
    List<Integer> streams = rows.streamsWithDueRows();
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
    PublishLane lane = lanes[streamIndex];
    if (lane.tailUnchecked()) {
      return PublishRun.NOTHING; // taken over: the tail check goes first, then kicks the stream
    }
    long now = clock.millis();
    // Copied before the read: a row whose outcome commits after this copy is skipped either way,
    // one that committed before it is no longer waiting in what the read sees.
    Set<Long> recording = Set.copyOf(lane.recording);
    List<WaitingRow> waiting = rows.waiting(streamIndex, recording.isEmpty() ? 0 : lane.floor);
    int read = waiting.size();
    if (!recording.isEmpty()) {
      waiting = waiting.stream().filter(r -> !recording.contains(r.seq())).toList();
    }
    if (waiting.isEmpty()) {
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
    boolean bound = transport.boundStreams().contains(streamIndex);
    if (bound && !lane.synced && transport.isConnected()) {
      resync(streamIndex, lane);
    }
    RunPlan plan = RunPlan.of(waiting, now, bound, maySend(), perProject);
    SendOutcome outcome = send(streamIndex, lane, plan.toSend());
    CompletableFuture<Void> recorded = CompletableFuture.completedFuture(null);
    boolean toRecord =
        !plan.dueRetries().isEmpty()
            || !plan.unbound().isEmpty()
            || outcome.anyAcked()
            || outcome.anyCounted();
    boolean onlyPublished =
        plan.dueRetries().isEmpty() && plan.unbound().isEmpty() && outcome.failures.isEmpty();
    if (toRecord && onlyPublished) {
      // Every row read went out when nothing was held back (no actor waiting for a retry, no
      // project over its cap): the next read may start after the last of them.
      recorded =
          recordPublishedAsync(
              streamIndex, lane, plan.toSend(), outcome, plan.sendsAll(waiting.size()));
    } else if (toRecord) {
      database.inTransaction(
          tx -> {
            rows.recordRun(
                tx, ownership.fence(tx, Duty.stream(streamIndex)), streamIndex, plan, outcome);
            return null;
          });
    }
    int publishedNow = outcome.publishedCount();
    published.add(publishedNow);
    if (publishedNow > 0) {
      nudges.nudge(streamIndex);
    }
    if (!outcome.failures.isEmpty()) {
      failedSends.add(outcome.failures.size());
      SendOutcome.Failure first = outcome.failures.values().iterator().next();
      log.warn(
          "{}: {} send(s) failed, first {}: {}",
          EventStreams.streamName(streamIndex),
          outcome.failures.size(),
          plan.toSend().get(first.index()).eventId(),
          first.error());
    }
    boolean more =
        !plan.disconnected()
            && outcome.failures.isEmpty()
            && (plan.capped() || read == PublisherRows.ROWS_PER_RUN);
    return new PublishRun(
        publishedNow, outcome.countedCount(), plan.unbound().size(), more, recorded);
  }

  /**
   * Not paused, connected, and on a connection whose server was checked for a lost tail: one that
   * came back after a drop (the listener that pauses the publisher may not have run yet) waits.
   */
  private boolean maySend() {
    return !paused && transport.isConnected() && transport.connectionEpoch() == checkedEpoch;
  }

  /**
   * Sends {@code toSend} in order, each expecting the one before it on the stream, and waits for
   * the PubAcks; the lane then knows the stream's last msg id, or that it must read it again.
   */
  private SendOutcome send(int streamIndex, PublishLane lane, List<WaitingRow> toSend) {
    List<CompletableFuture<Long>> acks = new ArrayList<>(toSend.size());
    String expected = lane.lastMsgId;
    for (WaitingRow row : toSend) {
      acks.add(transport.publish(streamIndex, row.eventId(), row.payload(), expected, row.trace()));
      expected = row.eventId();
    }
    SendOutcome outcome = SendOutcome.collect(toSend, acks, publishTimeout, transport, clock);
    if (outcome.failures.isEmpty()) {
      if (!toSend.isEmpty()) {
        lane.lastMsgId = toSend.get(toSend.size() - 1).eventId();
        lane.justSynced = false;
      }
    } else if (lane.justSynced && outcome.firstRefused()) {
      lane.lastMsgId = null; // the server does not know the id we read back: send without it
      lane.justSynced = false;
    } else {
      lane.synced = false; // read the stream's last message again before the next send
    }
    return outcome;
  }

  /** Reads the stream's last msg id; when the stream cannot be read, sends go out unchained. */
  private void resync(int streamIndex, PublishLane lane) {
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

  /**
   * A run in which every send was acknowledged (no failure, no retry due, no unbound row) records
   * its rows as published without waiting: the lane goes on to its next run while the commit waits
   * for the writer, and that run skips these rows until the commit is in. A run with anything else
   * records it all before the next run, whose holds depend on it.
   */
  private CompletableFuture<Void> recordPublishedAsync(
      int streamIndex,
      PublishLane lane,
      List<WaitingRow> sent,
      SendOutcome outcome,
      boolean allSent) {
    List<Long> seqs = sent.stream().map(WaitingRow::seq).toList();
    lane.recording.addAll(seqs);
    if (allSent) {
      lane.floor = Math.max(lane.floor, seqs.get(seqs.size() - 1));
    } else {
      lane.floor = 0; // rows held back below these: read from the start
    }
    CompletableFuture<Void> record =
        database.inTransactionAsync(
            tx -> {
              rows.markPublished(tx, ownership.fence(tx, Duty.stream(streamIndex)), sent, outcome);
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

  /**
   * When the actor's outbox next has due work: now for pending rows, else the earliest retry_wait
   * row's next attempt; empty when nothing waits (the alarm is then deleted).
   */
  public Optional<Instant> nextDue(Tx tx, ActorAddress actor, int streamIndex) throws SQLException {
    return rows.nextDue(tx, actor, streamIndex);
  }

  public long publishedCount() {
    return published.sum();
  }

  public long failedSendCount() {
    return failedSends.sum();
  }
}
