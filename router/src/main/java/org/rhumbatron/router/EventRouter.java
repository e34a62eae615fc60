package org.rhumbatron.router;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import org.rhumbatron.coordinator.outbox.StreamNudges;
import org.rhumbatron.platform.cluster.Duty;
import org.rhumbatron.platform.cluster.DutyListener;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.concurrent.DaemonThreads;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.eventlog.EventLogClient.Backlog;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.router.archive.ArchiveExpiry;
import org.rhumbatron.router.catchup.ConsumerLags;
import org.rhumbatron.router.maintenance.Maintenance;
import org.rhumbatron.router.maintenance.MaintenanceReport;
import org.rhumbatron.router.projector.ProjectViewProjector;
import org.rhumbatron.router.run.SubscriptionHandler;
import org.rhumbatron.router.run.SubscriptionRun;
import org.rhumbatron.router.sweep.SweepTick;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event router in core. {@link #nudge} (the outbox publisher's in-process call) runs
 * project-view-projector then causal-router on that stream, at most 2 consumes each; the tick at
 * the start of each minute ({@link #sweepTick}) sweeps one stream with the same two, plus one
 * audit-archiver batch, plus one analytics-projector batch when the tick runs neither maintenance
 * nor the release sweep. The daily tick also deletes archive objects past their expiry. Each stream
 * has one lane, so runs of a stream never overlap; nudges coalesce: at most one run in flight and
 * one more pending per stream.
 *
 * <p>Beyond the seed: every {@code router.catch-up-check-every} core samples each stream's
 * consumers ({@link ConsumerLags}), and a stream whose archiver or analytics is behind gets
 * catch-up turns: a few more batches of each, until a fetch comes back short, on one thread for all
 * streams beside the lanes, so that they never hold a nudged run up.
 */
public final class EventRouter implements StreamNudges, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(EventRouter.class);
  private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);
  // The server redelivers a nacked record only once its delay is over.
  private static final long RETRY_SLACK_MILLIS = 200;

  /**
   * The router's parts; the archiver and analytics are read by the sweep and the catch-up, which
   * reads the consumers' backlogs of a stream through {@code backlogs}.
   */
  public record Parts(
      SubscriptionRun run,
      ProjectViewProjector.Factory projector,
      SubscriptionHandler causalRouter,
      SubscriptionHandler auditArchiver,
      SubscriptionHandler analyticsProjector,
      Maintenance maintenance,
      ArchiveExpiry archiveExpiry,
      IntFunction<Map<Subscription, Backlog>> backlogs) {}

  /**
   * The router as core wires it: the projector with its 15-call cap, the causal-router running the
   * rules, the sweep's archiver and analytics batches, and maintenance sending to the commands.
   */
  public static EventRouterWiring wiring() {
    return new EventRouterWiring();
  }

  /** What a sweep tick did (for the log and the tests). */
  public record SweepReport(SweepTick tick, int fetched, List<MaintenanceReport> maintenance) {}

  private final Parts parts;
  private final Clock clock;
  private final Settings settings;
  private final int consumesPerRun;
  // One thread per stream: a busy stream keeps its lane full, where a shared pool's serial lanes
  // would let it starve the other streams.
  private final ExecutorService[] lanes = new ExecutorService[EventStreams.STREAM_COUNT];
  private final AtomicBoolean[] nudgePending = new AtomicBoolean[EventStreams.STREAM_COUNT];
  private final AtomicLong nudgeRuns = new AtomicLong();
  private final CatchUpTurns catchUp;
  private volatile boolean closed;
  private final DutyOwnership ownership;
  private final ScheduledExecutorService ticker =
      Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("router-sweep"));

  public EventRouter(Parts parts, Clock clock, Settings settings, DutyOwnership ownership) {
    this.ownership = ownership;
    this.parts = parts;
    this.clock = clock;
    this.settings = settings;
    this.consumesPerRun = settings.get(Settings.ROUTER_CONSUMES_PER_RUN);
    for (int i = 0; i < lanes.length; i++) {
      lanes[i] =
          Executors.newSingleThreadExecutor(
              DaemonThreads.named("event-router-" + EventStreams.streamName(i)));
      nudgePending[i] = new AtomicBoolean();
    }
    this.catchUp = new CatchUpTurns(parts, this::nudge, () -> closed, clock, settings);
    long retryAfter = settings.get(Settings.ROUTER_NACK_DELAY).toMillis() + RETRY_SLACK_MILLIS;
    parts.run().onRetryLater(stream -> retryLater(stream, retryAfter));
    ownership.listen(
        new DutyListener() {
          @Override
          public void gained(Duty duty, long epoch) {
            if (duty.isStream()) {
              takeOver(duty.streamIndex());
            }
          }
        });
  }

  /**
   * A nudge of {@code streamIndex} once its nacked records are due again, and a catch-up turn when
   * the catch-up runs (the failed records may be the archiver's or the analytics').
   */
  private void retryLater(int streamIndex, long afterMillis) {
    if (closed) {
      return;
    }
    try {
      ticker.schedule(
          () -> {
            nudge(streamIndex);
            if (catchUp.running()) {
              catchUp(streamIndex);
            }
          },
          afterMillis,
          TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException stopping) {
      // Core is stopping: the next start catches up.
    }
  }

  /**
   * After this node took {@code streamIndex} over, on its lane and before any fetch: what the
   * previous holder had in hand and never acked, in the seed's order of the subscriptions, then a
   * nudge for what it left unread.
   */
  private void takeOver(int streamIndex) {
    if (closed) {
      return;
    }
    try {
      lanes[streamIndex].execute(
          () -> {
            SubscriptionRun run = parts.run();
            int batch = settings.get(Settings.ROUTER_FETCH_BATCH);
            for (SubscriptionHandler h :
                List.of(
                    parts.projector().forRun(),
                    parts.causalRouter(),
                    parts.auditArchiver(),
                    parts.analyticsProjector())) {
              runGuarded(
                  streamIndex, "takeover", () -> run.applyUnacknowledged(streamIndex, h, batch));
            }
          });
    } catch (RejectedExecutionException stopping) {
      return;
    }
    nudge(streamIndex);
  }

  /** Records applied ahead of their redelivery after takeovers (for the tests and /metrics). */
  public long takenOverApplied() {
    return parts.run().takenOverApplied();
  }

  /**
   * The seed's {@code EVENT_ROUTER.nudge(streamIndex)}: queues one run of the stream unless one is
   * already queued (a nudge that arrives while a run is in flight queues the next one).
   */
  @Override
  public void nudge(int streamIndex) {
    if (closed || !nudgePending[streamIndex].compareAndSet(false, true)) {
      return;
    }
    try {
      lanes[streamIndex].execute(
          () -> {
            nudgePending[streamIndex].set(false);
            nudgeRuns.incrementAndGet();
            runGuarded(streamIndex, "nudge", () -> runProjectorAndRouter(streamIndex));
          });
    } catch (RejectedExecutionException stopping) {
      // Core is stopping while the publisher finishes a send: the next start's sweep reads it.
    }
  }

  /** The projector factory, for tests that drive one run by hand. */
  public ProjectViewProjector.Factory projector() {
    return parts.projector();
  }

  /** Records {@code subscription} applied since start (for /metrics). */
  public long appliedCount(Subscription subscription) {
    return parts.run().appliedCount(subscription);
  }

  /** How many nudge runs started (a burst of nudges coalesces into few). */
  public long nudgeRuns() {
    return nudgeRuns.get();
  }

  /** Completes when every run queued on {@code streamIndex} before this call has finished. */
  public CompletableFuture<Void> drained(int streamIndex) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    lanes[streamIndex].execute(() -> done.complete(null));
    return done;
  }

  /** The sweep of the minute holding {@code at}, on the swept stream's lane; waits for it. */
  public SweepReport sweepTick(Instant at) {
    SweepTick tick = SweepTick.at(at, settings);
    CompletableFuture<Integer> fetched = new CompletableFuture<>();
    int stream = tick.streamIndex();
    lanes[stream].execute(
        () -> {
          int n = 0;
          if (!ownership.owns(Duty.stream(stream))) {
            fetched.complete(0); // the stream's holder sweeps it
            return;
          }
          try {
            // A consumer deleted under the running core: its pulls go unanswered until it is made
            // again, so each fetch waits 1 s and comes back empty. (analytics-projector too on a
            // tick that does not read it: one not read yet is left to its first read.)
            for (Subscription sub : Subscription.values()) {
              parts.run().ensureConsumer(stream, sub);
            }
            n += runProjectorAndRouter(stream);
            n += parts.run().consume(stream, parts.auditArchiver()).fetched();
            if (tick.runsAnalytics()) {
              n += parts.run().consume(stream, parts.analyticsProjector()).fetched();
            }
          } catch (RuntimeException e) {
            log.warn("sweep of {} failed: {}", EventStreams.streamName(stream), e.toString());
          }
          fetched.complete(n);
        });
    List<MaintenanceReport> maintenance = new ArrayList<>();
    // Only the holder of the sweep duty runs the maintenance ticks.
    boolean sweeps = ownership.owns(Duty.SWEEP);
    try {
      if (sweeps && tick.daily()) {
        maintenance.add(parts.maintenance().runDaily(tick.minute()));
        int expired = parts.archiveExpiry().expire();
        if (expired > 0) {
          log.info("deleted {} archive objects older than their expiry", expired);
        }
      }
      if (sweeps && tick.releaseSweep()) {
        maintenance.add(parts.maintenance().runReleaseSweep(tick.minute()));
      }
    } catch (RuntimeException e) {
      log.warn("maintenance of the {} tick failed: {}", tick.minute(), e.toString());
    }
    return new SweepReport(tick, fetched.join(), maintenance);
  }

  /**
   * At start: runs every stream now, for events no router read yet (a core killed after it
   * published, or a writer before this start), and once more after {@code router.ack-wait}, when
   * the deliveries a killed core held unacked come back. Without it both would wait for their
   * stream's sweep, up to 8 minutes, when nothing else nudges the stream.
   */
  public void catchUpAfterStart() {
    nudgeAll();
    ticker.schedule(
        this::nudgeAll,
        settings.get(Settings.ROUTER_ACK_WAIT).toMillis() + 1_000,
        TimeUnit.MILLISECONDS);
  }

  private void nudgeAll() {
    for (int stream = 0; stream < EventStreams.STREAM_COUNT; stream++) {
      nudge(stream);
    }
  }

  /**
   * Schedules {@link #sweepTick} at the start of each minute of {@code clock}, and the catch-up
   * ({@link #startCatchUp}).
   */
  public void startSweeps() {
    scheduleNextTick();
    startCatchUp();
  }

  /**
   * Samples every stream's consumers each {@code router.catch-up-check-every} and queues catch-up
   * turns for the streams whose archiver or analytics is behind, and a nudge for those whose
   * projector or causal router left an Event unread.
   */
  public void startCatchUp() {
    catchUp.start();
  }

  /** The sampled lag of every stream's consumers (for /metrics and the dashboard). */
  public ConsumerLags lags() {
    return catchUp.lags();
  }

  /** How many catch-up batches ran (for the tests and the benchmarks). */
  public long catchUpBatches() {
    return catchUp.batches();
  }

  /** Queues one catch-up turn of {@code streamIndex} unless one is queued already. */
  void catchUp(int streamIndex) {
    catchUp.queue(streamIndex);
  }

  private void scheduleNextTick() {
    long now = clock.millis();
    long delay = 60_000 - Math.floorMod(now, 60_000L);
    ticker.schedule(
        () -> {
          try {
            // A timer may fire a little early: half a second of slack keeps the tick in its minute.
            sweepTick(clock.instant().plusMillis(500));
          } catch (RuntimeException e) {
            log.warn("sweep tick failed: {}", e.toString());
          } finally {
            scheduleNextTick();
          }
        },
        delay,
        TimeUnit.MILLISECONDS);
  }

  private int runProjectorAndRouter(int streamIndex) {
    int n = parts.run().run(streamIndex, parts.projector().forRun(), consumesPerRun);
    return n + parts.run().run(streamIndex, parts.causalRouter(), consumesPerRun);
  }

  private static void runGuarded(int streamIndex, String what, Runnable body) {
    try {
      body.run();
    } catch (RuntimeException e) {
      log.warn("{} run of {} failed: {}", what, EventStreams.streamName(streamIndex), e.toString());
    }
  }

  @Override
  public void close() {
    closed = true;
    ticker.shutdownNow();
    catchUp.close();
    for (ExecutorService lane : lanes) {
      lane.shutdown();
    }
    try {
      for (ExecutorService lane : lanes) {
        lane.awaitTermination(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (ExecutorService lane : lanes) {
      lane.shutdownNow();
    }
  }
}
