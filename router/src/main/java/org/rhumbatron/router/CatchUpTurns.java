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
 * analytics is behind turns on its lane, yielding to the stream's queued nudges.
 */
final class CatchUpTurns {
  private static final Logger log = LoggerFactory.getLogger(CatchUpTurns.class);

  private final EventRouter.Parts parts;
  private final ExecutorService[] lanes;
  private final AtomicBoolean[] nudgePending;
  private final IntConsumer nudge;
  private final BooleanSupplier closed;
  private final Settings settings;
  private final int consumesPerRun;
  private final int fullBatch;
  private final int batchesPerTurn;
  private final ConsumerLags lags;
  private final AtomicBoolean[] queued = new AtomicBoolean[EventStreams.STREAM_COUNT];
  // Whether the stream's last catch-up turn gave way to a nudge; read and written on its lane.
  private final boolean[] gaveWay = new boolean[EventStreams.STREAM_COUNT];
  private final AtomicLong batches = new AtomicLong();
  private volatile boolean running;
  // Its own thread: a slow or unanswered JetStream request must not hold the minute ticks.
  private final ScheduledExecutorService watcher =
      Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("router-catch-up"));

  /**
   * {@code lanes}: the streams' lanes; {@code nudgePending}: whether a nudge is queued on each;
   * {@code nudge}: queues a nudge of a stream; {@code closed}: whether the router closed.
   */
  CatchUpTurns(
      EventRouter.Parts parts,
      ExecutorService[] lanes,
      AtomicBoolean[] nudgePending,
      IntConsumer nudge,
      BooleanSupplier closed,
      Clock clock,
      Settings settings) {
    this.parts = parts;
    this.lanes = lanes;
    this.nudgePending = nudgePending;
    this.nudge = nudge;
    this.closed = closed;
    this.settings = settings;
    this.consumesPerRun = settings.get(Settings.ROUTER_CONSUMES_PER_RUN);
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
      lanes[streamIndex].execute(
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
              // Behind the nudges queued meanwhile: they keep priority over the catch-up.
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
   * Gives way before its next batch when a nudge is queued. A turn after one that gave way first
   * reads as many batches of each as a nudge run reads ({@code router.consumes-per-run}): under a
   * nudge after every publish, the lane then alternates nudge runs and catch-up turns of the same
   * size, and the catch-up keeps the nudges' pace instead of starving. Returns whether either may
   * have more: a fetch came back full, or the turn gave way.
   */
  private boolean readBehind(int streamIndex) {
    int firstYielding = gaveWay[streamIndex] ? consumesPerRun : 0;
    gaveWay[streamIndex] = false;
    boolean archiverMore = true;
    boolean analyticsMore = true;
    for (int i = 0; i < batchesPerTurn && (archiverMore || analyticsMore); i++) {
      if (archiverMore) {
        if (i >= firstYielding && giveWay(streamIndex)) {
          return true;
        }
        archiverMore = batch(streamIndex, parts.auditArchiver());
      }
      if (analyticsMore) {
        if (i >= firstYielding && giveWay(streamIndex)) {
          return true;
        }
        analyticsMore = batch(streamIndex, parts.analyticsProjector());
      }
    }
    return archiverMore || analyticsMore;
  }

  /** Whether a nudge is queued, so the catch-up gives way to it. */
  private boolean giveWay(int streamIndex) {
    gaveWay[streamIndex] = nudgePending[streamIndex].get();
    return gaveWay[streamIndex];
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
  }
}
