package org.rhumbatron.router;

import java.time.Clock;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.IntConsumer;
import org.rhumbatron.platform.concurrent.DaemonThreads;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.router.catchup.ConsumerLags;
import org.rhumbatron.router.run.SubscriptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The router's catch-up: samples each stream's consumers and gives a stream whose archiver or
 * analytics is behind turns on a thread of their own, one for all streams, beside the streams'
 * lanes: a nudged run of a fresh Event never waits behind a catch-up batch, and the catch-up of
 * every stream together takes at most one core.
 */
final class CatchUpTurns {
  private static final Logger log = LoggerFactory.getLogger(CatchUpTurns.class);

  private final EventRouter.Parts parts;
  private final IntConsumer nudge;
  private final BooleanSupplier closed;
  private final Settings settings;
  private final int fullBatch;
  private final int batchesPerTurn;
  private final ConsumerLags lags;
  private final AtomicBoolean[] queued = new AtomicBoolean[EventStreams.STREAM_COUNT];
  // Turns of all streams in the order queued: a stream with more queues its next turn behind the
  // other streams' turns.
  private final ExecutorService turns =
      Executors.newSingleThreadExecutor(DaemonThreads.named("router-catch-up-turns"));
  private final AtomicLong batches = new AtomicLong();
  private volatile boolean running;
  // Its own thread: a slow or unanswered JetStream request must not hold the minute ticks.
  private final ScheduledExecutorService watcher =
      Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("router-catch-up"));

  /** {@code nudge}: queues a nudge of a stream; {@code closed}: whether the router closed. */
  CatchUpTurns(
      EventRouter.Parts parts,
      IntConsumer nudge,
      BooleanSupplier closed,
      Clock clock,
      Settings settings) {
    this.parts = parts;
    this.nudge = nudge;
    this.closed = closed;
    this.settings = settings;
    this.fullBatch = settings.get(Settings.ROUTER_FETCH_BATCH);
    this.batchesPerTurn = settings.get(Settings.ROUTER_CATCH_UP_BATCHES);
    this.lags = new ConsumerLags(clock, settings);
    for (int i = 0; i < queued.length; i++) {
      queued[i] = new AtomicBoolean();
    }
  }

  /** Samples every stream each {@code router.catch-up-check-every}, from now on. */
  void start() {
    long every = settings.get(Settings.ROUTER_CATCH_UP_CHECK_EVERY).toMillis();
    running = true;
    watcher.scheduleWithFixedDelay(this::sampleAll, 0, every, TimeUnit.MILLISECONDS);
  }

  boolean running() {
    return running;
  }

  ConsumerLags lags() {
    return lags;
  }

  long batches() {
    return batches.get();
  }

  private void sampleAll() {
    for (int stream = 0; stream < EventStreams.STREAM_COUNT && !closed.getAsBoolean(); stream++) {
      try {
        if (lags.record(stream, parts.backlogs().apply(stream))) {
          queue(stream);
        }
        if (lags.nudgedBehind(stream)) {
          nudge.accept(stream);
        }
      } catch (RuntimeException e) {
        // NATS away: the next sample tries again; the metric keeps its last value meanwhile.
        log.debug("cannot sample {}: {}", EventStreams.streamName(stream), e.toString());
      }
    }
  }

  /** Queues one catch-up turn of {@code streamIndex} unless one is queued already. */
  void queue(int streamIndex) {
    if (closed.getAsBoolean() || !queued[streamIndex].compareAndSet(false, true)) {
      return;
    }
    try {
      turns.execute(
          () -> {
            queued[streamIndex].set(false);
            boolean more = false;
            try {
              more = readBehind(streamIndex);
            } catch (RuntimeException e) {
              log.warn(
                  "catch-up of {} failed: {}", EventStreams.streamName(streamIndex), e.toString());
            }
            if (more) {
              queue(streamIndex);
            }
          });
    } catch (RejectedExecutionException stopping) {
      queued[streamIndex].set(false);
    }
  }

  /**
   * Up to {@code router.catch-up-batches} batches of the archiver and of the analytics, each a
   * consume as the sweep runs it (one archive object per batch, the analytics point cap per batch).
   * Returns whether either may have more: a fetch came back full.
   */
  private boolean readBehind(int streamIndex) {
    boolean archiverMore = true;
    boolean analyticsMore = true;
    for (int i = 0; i < batchesPerTurn && (archiverMore || analyticsMore); i++) {
      if (archiverMore) {
        archiverMore = batch(streamIndex, parts.auditArchiver());
      }
      if (analyticsMore) {
        analyticsMore = batch(streamIndex, parts.analyticsProjector());
      }
    }
    return archiverMore || analyticsMore;
  }

  /** One consume; whether its fetch came back full. */
  private boolean batch(int streamIndex, SubscriptionHandler handler) {
    int fetched = parts.run().consume(streamIndex, handler).fetched();
    if (fetched > 0) {
      batches.incrementAndGet();
    }
    return fetched >= fullBatch;
  }

  void close() {
    watcher.shutdownNow();
    turns.shutdownNow();
  }
}
