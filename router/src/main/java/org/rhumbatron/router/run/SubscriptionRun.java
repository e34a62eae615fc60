package org.rhumbatron.router.run;

import java.time.Duration;
import java.util.Collections;
import java.util.EnumMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntConsumer;
import org.rhumbatron.platform.cluster.Duty;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.cluster.OwnsEverything;
import org.rhumbatron.platform.eventlog.EventLogClient;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.EventStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One consume of one subscription on one stream: fetch at most 100 records, hand them to the
 * handler, then settle each record. Applied records are acked; deferred ones are nacked for an
 * immediate redelivery (a deferral is not a failure); failed ones count in {@code
 * k2_batch_failures} and are nacked for 30 s, or at the 5th failure dead-lettered and acked;
 * malformed ones (they never decode) are dead-lettered and acked at once.
 */
public final class SubscriptionRun {
  private static final Logger log = LoggerFactory.getLogger(SubscriptionRun.class);

  private final EventLogClient eventLog;
  private final BatchFailures failures;
  private final Duration nackDelay;
  private volatile IntConsumer retryLater = stream -> {};
  private final Map<Subscription, LongAdder> applied = new EnumMap<>(Subscription.class);
  private final LongAdder takenOverApplied = new LongAdder();

  private final DutyOwnership ownership;

  public SubscriptionRun(EventLogClient eventLog, BatchFailures failures, Duration nackDelay) {
    this(eventLog, failures, nackDelay, OwnsEverything.single());
  }

  /**
   * With several cores: a consume runs only while this node holds the stream's duty; a batch during
   * which it lost the duty goes back at once, uncounted (its writes were fenced, what committed
   * before is claimed and the redelivery skips it).
   */
  public SubscriptionRun(
      EventLogClient eventLog,
      BatchFailures failures,
      Duration nackDelay,
      DutyOwnership ownership) {
    this.ownership = ownership;
    this.eventLog = eventLog;
    this.failures = failures;
    this.nackDelay = nackDelay;
    for (Subscription s : Subscription.values()) {
      applied.put(s, new LongAdder());
    }
  }

  /**
   * Called with the stream index whenever failed records are nacked for the nack delay, so the
   * owner can run the stream again then: without it they wait for the next nudge or sweep.
   */
  public void onRetryLater(IntConsumer listener) {
    this.retryLater = listener;
  }

  /** Records {@code subscription} acked as applied (fresh or a repeat) since start, all streams. */
  public long appliedCount(Subscription subscription) {
    return applied.get(subscription).sum();
  }

  /**
   * What one consume did, for the caller's loop and the tests: {@code failed} counts the malformed
   * records too, and {@code deadLettered} says whether any record was dead-lettered.
   */
  public record Consumed(int fetched, int deferred, int failed, boolean deadLettered) {
    static final Consumed NOTHING = new Consumed(0, 0, 0, false);
  }

  /**
   * Runs up to {@code maxConsumes} consumes of {@code handler} on {@code streamIndex}; stops early
   * when a fetch comes back empty. Returns the records fetched in all.
   */
  public int run(int streamIndex, SubscriptionHandler handler, int maxConsumes) {
    int fetched = 0;
    for (int i = 0; i < maxConsumes; i++) {
      Consumed c = consume(streamIndex, handler);
      fetched += c.fetched();
      if (c.fetched() == 0) {
        break;
      }
    }
    return fetched;
  }

  /**
   * Makes {@code subscription}'s consumer on {@code streamIndex} again if it no longer exists (the
   * sweep's check: the server leaves a pull to a deleted consumer unanswered, so its fetches wait 1
   * s and come back empty). The new one starts at the stream's first record; the claims skip what
   * was applied.
   */
  public void ensureConsumer(int streamIndex, Subscription subscription) {
    if (eventLog.ensureConsumer(streamIndex, subscription)) {
      log.warn(
          "{} on {} was missing and is made again: it reads the stream from its first record",
          subscription.durableName(),
          EventStreams.streamName(streamIndex));
    }
  }

  /** One consume: at most the seed's 100 records. */
  public Consumed consume(int streamIndex, SubscriptionHandler handler) {
    Duty duty = Duty.stream(streamIndex);
    if (!ownership.owns(duty)) {
      return Consumed.NOTHING; // another node runs this stream
    }
    List<EventRecord> batch =
        eventLog.fetch(streamIndex, handler.subscription(), Integer.MAX_VALUE);
    if (batch.isEmpty()) {
      return Consumed.NOTHING;
    }
    RouteSpans route = RouteSpans.start(handler.subscription(), streamIndex, batch);
    BatchOutcome outcome;
    try {
      outcome = handler.handle(streamIndex, batch);
    } catch (RuntimeException e) {
      // A handler that throws failed the whole batch; its transactions rolled back their claims.
      outcome =
          Unavailable.infrastructure(e)
              ? BatchOutcome.waiting(batch, describe(e))
              : BatchOutcome.failed(batch, describe(e));
    }
    route.end(outcome);
    if (!ownership.owns(duty)) {
      batch.forEach(r -> r.nak(Duration.ZERO));
      log.info(
          "{} on {}: this node lost the stream during a batch; {} records go back to its holder",
          handler.subscription().durableName(),
          EventStreams.streamName(streamIndex),
          batch.size());
      return new Consumed(batch.size(), batch.size(), 0, false);
    }
    Set<EventRecord> unapplied = Collections.newSetFromMap(new IdentityHashMap<>());
    unapplied.addAll(outcome.deferred());
    unapplied.addAll(outcome.failed());
    unapplied.addAll(outcome.waiting());
    unapplied.addAll(outcome.malformed());
    boolean deadLettered = false;
    if (!outcome.malformed().isEmpty()) {
      deadLettered = settleMalformed(streamIndex, handler, outcome.malformed());
    }
    if (!outcome.failed().isEmpty()) {
      deadLettered |= settleFailed(streamIndex, handler, batch.size(), outcome);
    }
    if (!outcome.waiting().isEmpty()) {
      log.warn(
          "{} on {}: {} of {} records wait for what was out of reach, not counted as a failure,"
              + " redelivery in {}: {}",
          handler.subscription().durableName(),
          EventStreams.streamName(streamIndex),
          outcome.waiting().size(),
          batch.size(),
          nackDelay,
          outcome.unavailable());
      outcome.waiting().forEach(r -> r.nak(nackDelay));
      retryLater.accept(streamIndex);
    }
    outcome.deferred().forEach(r -> r.nak(Duration.ZERO));
    int acked = 0;
    for (EventRecord r : batch) {
      if (!unapplied.contains(r)) {
        r.ack();
        acked++;
      }
    }
    applied.get(handler.subscription()).add(acked);
    return new Consumed(
        batch.size(),
        outcome.deferred().size(),
        outcome.failed().size() + outcome.malformed().size(),
        deadLettered);
  }

  /** The most records of one consumer a takeover applies ahead of their redelivery. */
  static final int TAKEOVER_READ_MAX = 1_000;

  /**
   * After this node took {@code streamIndex} over: applies what {@code handler}'s consumer had
   * delivered to the previous holder and nobody acked, read by sequence from the stream, in batches
   * of the seed's 100 through the same claims, so that nothing waits out the seed's 5-minute ack
   * wait of a holder that died with it. Nothing is acked or nacked here: the redelivery finds the
   * claims and is acked with no effect, and what this leaves unapplied (deferred, failed, out of
   * reach) takes the normal way then. Returns the records applied.
   */
  public int applyUnacknowledged(int streamIndex, SubscriptionHandler handler, int batchSize) {
    Duty duty = Duty.stream(streamIndex);
    if (!ownership.owns(duty)) {
      return 0;
    }
    List<EventRecord> all =
        eventLog.unacknowledged(streamIndex, handler.subscription(), TAKEOVER_READ_MAX);
    int applied = 0;
    for (int from = 0; from < all.size() && ownership.owns(duty); from += batchSize) {
      List<EventRecord> batch = all.subList(from, Math.min(all.size(), from + batchSize));
      RouteSpans route = RouteSpans.start(handler.subscription(), streamIndex, batch);
      BatchOutcome outcome;
      try {
        outcome = handler.handle(streamIndex, batch);
      } catch (RuntimeException e) {
        outcome = BatchOutcome.waiting(batch, describe(e));
      }
      route.end(outcome);
      applied +=
          batch.size()
              - outcome.deferred().size()
              - outcome.failed().size()
              - outcome.waiting().size()
              - outcome.malformed().size();
    }
    if (!all.isEmpty()) {
      log.info(
          "{} on {}: applied {} of {} records the previous holder had unacknowledged",
          handler.subscription().durableName(),
          EventStreams.streamName(streamIndex),
          applied,
          all.size());
    }
    takenOverApplied.add(applied);
    return applied;
  }

  /** Records applied ahead of their redelivery after a takeover, since start. */
  public long takenOverApplied() {
    return takenOverApplied.sum();
  }

  /**
   * Dead-letters the malformed records and acks them, on their first delivery: they never decode,
   * and a nack would only hold the stream up. While the database is out of reach they wait at the
   * nack delay, uncounted, like any record that waits.
   */
  private boolean settleMalformed(
      int streamIndex, SubscriptionHandler handler, List<EventRecord> malformed) {
    String consumer = handler.subscription().durableName();
    String stream = EventStreams.streamName(streamIndex);
    BatchFailures.Counted counted;
    try {
      counted = failures.deadLetterMalformed(handler.subscription(), streamIndex, malformed);
    } catch (RuntimeException e) {
      if (!Unavailable.infrastructure(e)) {
        throw e;
      }
      log.warn(
          "{} on {}: cannot dead-letter {} malformed records, redelivery in {}: {}",
          consumer,
          stream,
          malformed.size(),
          nackDelay,
          describe(e));
      malformed.forEach(r -> r.nak(nackDelay));
      retryLater.accept(streamIndex);
      return false;
    }
    counted.handledBefore().forEach(EventRecord::ack);
    if (counted.deadLettered().isEmpty()) {
      return false;
    }
    log.error(
        "{} on {}: {} records do not decode and are dead-lettered at once as {}: {}",
        consumer,
        stream,
        counted.deadLettered().size(),
        counted.deadLetterKey(),
        ClaimingTemplate.summary(
            counted.deadLettered().stream().map(BatchFailures::malformedReason).toList(),
            "malformed record"));
    counted.deadLettered().forEach(EventRecord::ack);
    return true;
  }

  /** Counts the failure; nacks the failed records, or acks them once they are dead-lettered. */
  private boolean settleFailed(
      int streamIndex, SubscriptionHandler handler, int batchSize, BatchOutcome outcome) {
    String consumer = handler.subscription().durableName();
    String stream = EventStreams.streamName(streamIndex);
    BatchFailures.Counted counted =
        failures.recordFailure(
            handler.subscription(), streamIndex, outcome.failed(), outcome.error());
    if (!counted.handledBefore().isEmpty()) {
      log.warn(
          "{} on {}: {} failed records were dead-lettered before and came back (an ack lost):"
              + " acked again",
          consumer,
          stream,
          counted.handledBefore().size());
      counted.handledBefore().forEach(EventRecord::ack);
    }
    boolean deadLettered = !counted.deadLettered().isEmpty();
    if (deadLettered) {
      log.error(
          "{} on {}: {} records reached the failure limit and are dead-lettered as {}: {}",
          consumer,
          stream,
          counted.deadLettered().size(),
          counted.deadLetterKey(),
          outcome.error());
      counted.deadLettered().forEach(EventRecord::ack);
    }
    if (!counted.nacked().isEmpty()) {
      log.warn(
          "{} on {}: {} of {} records failed, redelivery in {}: {}",
          consumer,
          stream,
          counted.nacked().size(),
          batchSize,
          nackDelay,
          outcome.error());
      counted.nacked().forEach(r -> r.nak(nackDelay));
      retryLater.accept(streamIndex);
    }
    return deadLettered;
  }

  private static String describe(RuntimeException e) {
    String message = e.getMessage();
    return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
  }
}
