package org.rhumbatron.checker;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.ConsumerInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import org.rhumbatron.coordinator.outbox.OutboxRowState;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.bucket.NatsObjectStoreBucket;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Placeholders;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.protocol.EventStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One check: the cluster up, the workload running, the plan's faults injected one after another,
 * then everything healed, the workload stopped, core left to settle, core stopped, and the history
 * checked.
 */
final class CheckRun {
  private static final Logger log = LoggerFactory.getLogger(CheckRun.class);
  static final Duration SETTLE_WITHIN = Duration.ofMinutes(10);

  /**
   * How long, once the rest settled, the settle waits for the archiver and the analytics to read
   * every record: the bound on both after the load stops (core reads a stream further once its
   * oldest unread Event is router.catch-up-after old, 30 s, sampled every 5 s). What they have not
   * applied after it is a violation.
   */
  static final Duration CATCH_UP_WITHIN = Duration.ofMinutes(2);

  private final Path dir;
  private final CheckDatabase database;
  private final long seed;
  private final Duration duration;
  private final List<FaultPlan.Kind> kinds;
  private final int poisonCount;
  private final Clock clock;
  private List<Integer> poisonStreams = allStreams();
  private CheckShape shape = CheckShape.SINGLE;
  private final Takeovers takeovers;

  CheckRun(
      Path dir,
      CheckDatabase database,
      long seed,
      Duration duration,
      List<FaultPlan.Kind> kinds,
      int poisonCount,
      Clock clock) {
    this.dir = dir;
    this.database = database;
    this.seed = seed;
    this.duration = duration;
    this.kinds = kinds;
    this.poisonCount = poisonCount;
    this.clock = clock;
    this.takeovers = new Takeovers(clock);
  }

  /** The cores and nats-servers to run; one of each by default. */
  CheckRun shape(CheckShape s) {
    this.shape = s;
    return this;
  }

  /**
   * Poison only the event streams of the workload's Projects (and the queues). Their Events nudge
   * the router, so the poison is handled within the run; on a stream no Project uses, only the
   * minute sweep, one stream a minute, reaches it, which adds up to 8 minutes to the settle. For
   * the short check of {@code .ci/run}; {@code rhumbatron check} poisons all 8.
   */
  CheckRun poisonWorkloadStreamsOnly() {
    poisonStreams = null;
    return this;
  }

  private static List<Integer> allStreams() {
    List<Integer> all = new ArrayList<>();
    for (int i = 0; i < EventStreams.STREAM_COUNT; i++) {
      all.add(i);
    }
    return all;
  }

  /**
   * The check's result, always: an error of the check itself (not a violation) ends the run with a
   * report that names it and the seed, after the processes, the tmpfs and the database were closed
   * as on a normal end.
   */
  CheckReport run() {
    CheckReport faults = new CheckReport();
    faults.seed(seed);
    try {
      return execute(faults);
    } catch (Exception | Error e) {
      log.error("the check failed itself (seed {})", seed, e);
      faults.internalError(e);
      return faults;
    }
  }

  /** The run's id in its Projects', requests' and poison's names. */
  static String runId(long seed) {
    return Long.toString(seed, 36);
  }

  private CheckReport execute(CheckReport faults) throws Exception {
    String runId = runId(seed);
    String token = "check-" + runId;
    Path config = dir.resolve("core.properties");
    Files.createDirectories(dir);
    writeConfig(config);
    FaultPlan.Plan schedule =
        FaultPlan.plan(seed, duration, kinds, CheckWorkload.streams(runId), shape);
    schedule.dropped().forEach(k -> faults.dropped(k.wire));
    List<FaultPlan.Fault> plan = schedule.faults();
    Poison poisoner = new Poison(runId, seed);
    try (CheckDatabase db = database;
        CheckCluster cluster = new CheckCluster(dir, db.start(dir), config, token, shape)) {
      CheckCores cores = cluster.cores();
      Supplier<List<String>> live = live(cores);
      boolean downAtStart =
          plan.stream().anyMatch(f -> f.kind() == FaultPlan.Kind.NATS_DOWN_AT_START);
      if (downAtStart) {
        cores.startAll();
        Thread.sleep(plan.get(0).lastsMillis());
        faults.fault(FaultPlan.Kind.NATS_DOWN_AT_START.wire, 1);
      }
      cluster.nats().startAll();
      cores.startAll();
      LagWatch lags = new LagWatch(live).start();
      CheckApi api = new CheckApi(live, token, clock);
      CheckWorkload workload = new CheckWorkload(api, clock, runId, seed);
      workload.provision();
      if (poisonStreams == null) {
        poisonStreams =
            workload.projects().stream().map(EventStreams::streamIndex).distinct().toList();
      }
      FaultInjector injector =
          new FaultInjector(cluster, workload, db, takeovers, clock, poisoner, poisonStreams);
      Thread driver = new Thread(workload::run, "check-workload");
      driver.setDaemon(true); // a check that failed itself does not wait for it
      driver.start();
      injectPlan(faults, plan, injector);
      workload.stop();
      driver.join();
      if (workload.failure() != null) {
        throw workload.failure();
      }
      long caughtUpMillis = awaitSettled(cluster.dbUrl(), cluster.nats().url());
      lags.close();
      cores.stopAll();
      return checkHistory(cluster, workload, injector, faults, caughtUpMillis, api, lags);
    }
  }

  /** The history checked once core stopped, with the run's own figures beside it. */
  private CheckReport checkHistory(
      CheckCluster cluster,
      CheckWorkload workload,
      FaultInjector injector,
      CheckReport faults,
      long caughtUpMillis,
      CheckApi api,
      LagWatch lags)
      throws Exception {
    CheckCores cores = cluster.cores();
    try (Connection nats = JetStreamConnections.connect(cluster.nats().url(), "check-reader");
        Database history = Database.open(cluster.dbUrl())) {
      Bucket archive = cluster.directoryArchive(clock);
      if (archive == null) {
        archive = NatsObjectStoreBucket.open(nats, Bucket.EVIDENCE, clock, shape.replicas());
      }
      CheckReport report =
          new HistoryChecker(history, nats.jetStreamManagement())
              .check(
                  new HistoryChecker.Run(
                      workload.changesByRequest(),
                      injector.poison(),
                      injector.poisonCut(),
                      cores.crashes(),
                      cores.logs(),
                      archive));
      report.takeRunFrom(faults);
      api.report(report);
      takeovers.report(report);
      report.total("archiver_analytics_done_after_settle_ms", caughtUpMillis);
      lags.report(report);
      return report;
    }
  }

  private void writeConfig(Path config) throws IOException {
    Files.writeString(
        config,
        String.join(
            "\n",
            "changes.auto-approve=true",
            "router.ack-wait=10s",
            "router.nack-delay=2s",
            "queues.ack-wait=10s",
            "queues.ack-extend-every=4s",
            "integration.conflict-review-delay=5s",
            "agents.simulated.step-delay=20ms",
            shape.settings()));
  }

  /**
   * The plan's faults in order, each at its time from now; one that would end past {@code
   * --duration} is dropped when another of its kind ran, else it runs late.
   */
  private void injectPlan(CheckReport faults, List<FaultPlan.Fault> plan, FaultInjector injector)
      throws Exception {
    long poisonFaults = plan.stream().filter(f -> f.kind() == FaultPlan.Kind.POISON).count();
    long start = clock.millis();
    for (FaultPlan.Fault f : plan) {
      if (f.kind() == FaultPlan.Kind.NATS_DOWN_AT_START) {
        continue;
      }
      // Faults run late when the ones before took longer than planned (a restart, a wait for a
      // create): one that would end past --duration is dropped unless its kind has not run yet,
      // since every kind planned runs at least once. Poison takes no time and --poison is a
      // count, so it always goes out.
      long over = clock.millis() - start + f.lastsMillis() - duration.toMillis();
      if (f.kind() != FaultPlan.Kind.POISON && over > 0) {
        if (faults.faults().containsKey(f.kind().wire)) {
          continue;
        }
        log.warn("fault {} is the first of its kind: it runs {} ms past --duration", f, over);
      }
      long wait = start + f.atMillis() - clock.millis();
      if (wait > 0) {
        Thread.sleep(wait);
      }
      log.info("fault {} for {} ms", f.kind().wire, f.lastsMillis());
      // The poison faults left share what is left of --poison, so all of it goes out.
      long poisonLeft = poisonFaults - faults.faults().getOrDefault(FaultPlan.Kind.POISON.wire, 0L);
      int share =
          (int)
              ((poisonCount - injector.poison().size() + poisonLeft - 1) / Math.max(1, poisonLeft));
      injector.inject(f, share);
      faults.fault(f.kind().wire, 1);
    }
  }

  /** The cores a client reaches now, or all when none runs (its requests then fail and retry). */
  static Supplier<List<String>> live(CheckCores cores) {
    return () -> {
      List<String> running = cores.liveApiUrls();
      return running.isEmpty() ? cores.apiUrls() : running;
    };
  }

  /**
   * Every Change ended, the outbox published, and the nudged consumers done with every record of
   * every stream; then the archiver and the analytics done too, within {@link #CATCH_UP_WITHIN} (or
   * the time is up: the checker then names what is left). Returns how long the archiver and the
   * analytics took after the rest, in ms, or -1 when they did not finish.
   */
  private long awaitSettled(String dbUrl, String natsUrl) throws Exception {
    long deadline = clock.millis() + SETTLE_WITHIN.toMillis();
    try (Database db = Database.open(dbUrl);
        Connection nats = JetStreamConnections.connect(natsUrl, "check-settle")) {
      JetStreamManagement jsm = nats.jetStreamManagement();
      while (clock.millis() < deadline) {
        long open =
            db.read(
                tx ->
                    tx.queryLong(
                        "SELECT COUNT(*) FROM changes WHERE state IN ("
                            + Placeholders.of(ChangeInfo.OPEN_STATES)
                            + ")",
                        ChangeInfo.OPEN_STATES.toArray()));
        long unpublished =
            db.read(
                tx ->
                    tx.queryLong(
                        "SELECT COUNT(*) FROM outbox WHERE state <> ?",
                        OutboxRowState.PUBLISHED.dbName()));
        if (open == 0 && unpublished == 0 && done(jsm, false)) {
          break;
        }
        Thread.sleep(1_000);
      }
      long settled = clock.millis();
      long caughtUpBy = settled + CATCH_UP_WITHIN.toMillis();
      while (!done(jsm, true)) {
        if (clock.millis() >= caughtUpBy) {
          log.warn(
              "the archiver and the analytics did not read everything within {}", CATCH_UP_WITHIN);
          return -1;
        }
        Thread.sleep(1_000);
      }
      return clock.millis() - settled;
    }
  }

  /** As {@link #consumersDone}, false while JetStream does not answer (leaders being elected). */
  private static boolean done(JetStreamManagement jsm, boolean caughtUp) {
    try {
      return consumersDone(jsm, caughtUp);
    } catch (IOException notYet) {
      return false;
    }
  }

  /**
   * Whether every consumer of every event stream is done with every record: the nudged ones, or
   * with {@code caughtUp} the archiver and the analytics.
   */
  private static boolean consumersDone(JetStreamManagement jsm, boolean caughtUp)
      throws IOException {
    List<Subscription> consumers =
        Arrays.stream(Subscription.values())
            .filter(s -> HistoryChecker.CAUGHT_UP.contains(s) == caughtUp)
            .toList();
    for (int i = 0; i < EventStreams.STREAM_COUNT; i++) {
      for (Subscription s : consumers) {
        try {
          ConsumerInfo c = jsm.getConsumerInfo(EventStreams.streamName(i), s.durableName());
          if (c.getNumPending() > 0 || c.getNumAckPending() > 0) {
            return false;
          }
        } catch (JetStreamApiException missing) {
          // Not made yet: done only while its stream holds nothing for it.
          if (messages(jsm, i) > 0) {
            return false;
          }
        }
      }
    }
    return true;
  }

  private static long messages(JetStreamManagement jsm, int stream) throws IOException {
    try {
      return jsm.getStreamInfo(EventStreams.streamName(stream)).getStreamState().getMsgCount();
    } catch (JetStreamApiException missing) {
      return 0;
    }
  }
}
