package org.rhumbatron.workload;

import io.nats.client.JetStreamManagement;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.rhumbatron.coordinator.outbox.OutboxRowState;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.lifecycle.RunReads;
import org.rhumbatron.lifecycle.candidates.Approval;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.server.CoreService;

/**
 * One demo run on a started core: Projects with live apps, Changes of {@link
 * LifecycleWorkload#twentyTasks} created while a few per Project are open (their Tasks share and
 * nest {@code path:} scopes, within a Change and across the Changes of a Project, so the causal
 * router's resource overlap wakes Agents), each Change that awaits approval approved through {@link
 * Lifecycle#approveChange} as an operator would, until every Change ended and core is quiet. With
 * other cores, one is killed half way and the failover watched ({@link FailoverWatch}); a run that
 * stops moving fails with what each open Change waits for ({@link DemoStall}).
 */
final class DemoRun {
  static final int PROJECTS = 4;
  static final int OPEN_PER_PROJECT = 3;
  static final Duration POLL = Duration.ofMillis(100);
  static final Duration PROVISION_WITHIN = Duration.ofSeconds(60);
  static final Duration QUIET_WITHIN = Duration.ofSeconds(60);
  static final Duration QUIET_FOR = Duration.ofMillis(500);
  static final Duration STALL_AFTER = Duration.ofMinutes(3);
  static final Duration APPROVE_WITHIN = Duration.ofSeconds(30);
  // What a person reads in the dashboard's lists: the n-th Change takes the n-th, numbered.
  static final List<String> TITLES =
      List.of(
          "Add a sign-in page",
          "Fix rounding in the checkout total",
          "Cache the product search",
          "Move settings to their own screen",
          "Translate the emails to German",
          "Speed up the nightly report",
          "Show stock levels on the product page",
          "Retry failed payment webhooks");

  private final CoreService core;
  private final Settings settings;
  private final Path dataDir;
  private final Clock clock;
  private final int changes;
  private final Duration creating;
  private final DemoProgress progress;
  private final DemoApi api;
  private final DemoSummary.Approvals approvals = new DemoSummary.Approvals();
  private DemoCores others;
  private FailoverWatch failover;
  private Thread killer;

  DemoRun(
      CoreService core,
      Settings settings,
      Path dataDir,
      Clock clock,
      int changes,
      Duration creating,
      DemoProgress progress,
      DemoApi api) {
    this.core = core;
    this.settings = settings;
    this.dataDir = dataDir;
    this.clock = clock;
    this.changes = changes;
    this.creating = creating;
    this.progress = progress;
    this.api = api;
  }

  /**
   * When half the Changes asked for ended, one of {@code others} is SIGKILLed and the failover
   * watched beside the run; the summary's cores lines say what it showed.
   */
  DemoRun killHalfway(DemoCores others) {
    this.others = others;
    return this;
  }

  /** The demo's counts are the whole database's and streams', so it needs them fresh. */
  static void refuseUsedDataDir(Path dir) {
    Path db = dir.resolve("rhumbatron.db");
    if (Files.exists(db) || Files.exists(dir.resolve("nats"))) {
      throw new IllegalArgumentException(
          "demo needs a new or empty data directory: "
              + dir
              + " holds the database or nats store of an earlier run (leave out --data for a"
              + " fresh temporary one)");
    }
  }

  /** The title of the {@code n}-th Change of the run, e.g. "Cache the product search #3". */
  static String title(int n) {
    return TITLES.get(n % TITLES.size()) + " #" + (n + 1);
  }

  DemoSummary run(String dashboard) throws Exception {
    Lifecycle lifecycle = core.lifecycle();
    Database db = core.database();
    JetStreamManagement jsm = core.nats().jetStreamManagement();
    boolean autoApprove = settings.get(Settings.AUTO_APPROVE);
    DemoSummary.Streams before = DemoSummary.Streams.read(jsm);
    // Ids of this run: a --nats server's duplicate window must not know its stable event ids.
    String runId = Long.toString(clock.millis(), 36);
    List<String> projects = new ArrayList<>();
    for (int p = 0; p < Math.min(PROJECTS, changes); p++) {
      projects.add("demo-" + runId + "-p" + p);
    }
    LifecycleWorkload.provisionWithLiveApps(
        lifecycle, projects, "tenant-demo", clock, PROVISION_WITHIN);

    WorkGraph graph = LifecycleWorkload.twentyTasks();
    long startMs = clock.millis();
    long createUntil = creating == null ? Long.MAX_VALUE : startMs + creating.toMillis();
    int maxOpen = projects.size() * OPEN_PER_PROJECT;
    int created = 0;
    DemoProgress.Counts counts = counts(db, jsm, before, changes);
    long movedAtMs = startMs;
    while (true) {
      long now = clock.millis();
      boolean creatingMore = created < changes && now < createUntil;
      while (creatingMore && created - counts.ended() < maxOpen) {
        lifecycle
            .changes()
            .create(
                projects.get(created % projects.size()), "demo-c" + created, title(created), graph)
            .get();
        created++;
        creatingMore = created < changes && clock.millis() < createUntil;
      }
      if (!autoApprove) {
        approveAwaiting(lifecycle, db);
      }
      DemoProgress.Counts next = counts(db, jsm, before, creatingMore ? changes : created);
      if (!next.equals(counts)) {
        movedAtMs = now;
      }
      counts = next;
      progress.update(counts);
      if (others != null && failover == null && counts.ended() * 2 >= changes) {
        killOne(projects);
      }
      if (!creatingMore && counts.ended() >= created) {
        break;
      }
      if (stalled(now, movedAtMs, failover == null ? 0 : failover.settledAtMillis())) {
        throw new IllegalStateException(stallReport(created - counts.ended(), projects));
      }
      Thread.sleep(POLL.toMillis());
    }
    long wallMs = clock.millis() - startMs;
    boolean quiet = awaitQuiet(db, jsm, before, created);
    progress.finish(counts(db, jsm, before, created));
    return DemoSummary.read(
        db,
        jsm,
        before,
        new DemoSummary.Run(
            changes,
            created,
            autoApprove ? DemoSummary.AUTO_APPROVE : DemoSummary.OPERATOR,
            approvals,
            wallMs,
            quiet,
            dashboard,
            dataDir,
            cluster()));
  }

  /**
   * Whether nothing moved for {@link #STALL_AFTER}: counted from the last move, or from the
   * failover's end ({@link Long#MAX_VALUE} while it runs) when that is later.
   */
  static boolean stalled(long nowMs, long movedAtMs, long failoverEndedAtMs) {
    return nowMs - Math.max(movedAtMs, failoverEndedAtMs) > STALL_AFTER.toMillis();
  }

  /** SIGKILLs the busiest other core and watches the failover on a thread of its own. */
  private void killOne(List<String> projects) {
    FailoverWatch watch =
        new FailoverWatch(api, projects, clock, FailoverWatch.allowance(settings));
    failover = watch;
    killer =
        new Thread(
            () -> {
              try {
                DemoCores.Killed k = others.killBusiest(core.ownership().view());
                watch.killed(k.node(), k.dutiesHeld());
                watch.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } finally {
                watch.end();
              }
            },
            "rhumbatron-demo-kill");
    killer.setDaemon(true);
    killer.start();
  }

  /** The cores lines of the summary: null with one core, no failover when none was killed. */
  private DemoSummary.Cluster cluster() throws InterruptedException {
    if (others == null) {
      return null;
    }
    if (killer == null) {
      return new DemoSummary.Cluster(others.count() + 1, null);
    }
    failover.stop();
    killer.join();
    return new DemoSummary.Cluster(others.count() + 1, failover.result());
  }

  /** The stall's message: what each open Change waits for, as the API tells it. */
  private String stallReport(long open, List<String> projects) throws InterruptedException {
    StringBuilder b =
        new StringBuilder("demo stalled: nothing moved for ")
            .append(STALL_AFTER.toSeconds())
            .append(" s");
    if (failover != null) {
      b.append(" after the failover ended");
    }
    b.append(" with ")
        .append(open)
        .append(" Changes open; see ")
        .append(dataDir.resolve("core.log"));
    try {
      for (String line : DemoStall.describe(api, projects)) {
        b.append("\n  ").append(line);
      }
    } catch (java.io.IOException e) {
      b.append("\n  (the API did not say what they wait for: ").append(e.getMessage()).append(')');
    }
    return b.toString();
  }

  /** Approves each Change awaiting approval; one that moved on meanwhile comes again or not. */
  private void approveAwaiting(Lifecycle lifecycle, Database db) throws Exception {
    List<String> awaiting = new RunReads(db).changeIds(ChangeState.AWAITING_APPROVAL);
    for (String changeId : awaiting) {
      try {
        Approval approval =
            lifecycle
                .approvals()
                .approve(changeId)
                .get(APPROVE_WITHIN.toMillis(), TimeUnit.MILLISECONDS);
        approvals.count(approval.promotion());
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof LifecycleException)) {
          throw e;
        }
        // it left awaiting_approval between the read and the approval (a rebase)
      }
    }
  }

  private static DemoProgress.Counts counts(
      Database db, JetStreamManagement jsm, DemoSummary.Streams before, int total)
      throws Exception {
    RunReads reads = new RunReads(db);
    return new DemoProgress.Counts(
        reads.changeCount(ChangeState.COMPLETED),
        reads.changesEnded(),
        total,
        db.read(tx -> tx.queryLong("SELECT COUNT(*) FROM outbox")),
        DemoSummary.Streams.read(jsm).commandsSince(before));
  }

  /**
   * Waits until every outbox row is published and applied by the projector and the causal router,
   * the COMMANDS stream holds nothing, and the counts stood still for {@link #QUIET_FOR}: what
   * follows the last Change's end (index builds, late wakes) is in the summary too. False when core
   * did not get quiet within {@link #QUIET_WITHIN}.
   */
  private boolean awaitQuiet(
      Database db, JetStreamManagement jsm, DemoSummary.Streams before, int total)
      throws Exception {
    long deadline = clock.millis() + QUIET_WITHIN.toMillis();
    DemoProgress.Counts last = null;
    while (clock.millis() < deadline) {
      long unsettled =
          db.read(
              tx ->
                  tx.queryLong(
                      "SELECT COUNT(*) FROM outbox o WHERE o.state <> ?"
                          + " OR (SELECT COUNT(*) FROM processed_events p"
                          + " WHERE p.event_id = o.event_id AND p.consumer IN (?, ?)) < 2",
                      OutboxRowState.PUBLISHED.dbName(),
                      Subscription.PROJECT_VIEW_PROJECTOR.durableName(),
                      Subscription.CAUSAL_ROUTER.durableName()));
      DemoSummary.Streams streams = DemoSummary.Streams.read(jsm);
      DemoProgress.Counts now = counts(db, jsm, before, total);
      if (unsettled == 0 && streams.commandsHeld() == 0 && now.equals(last)) {
        return true;
      }
      last = unsettled == 0 && streams.commandsHeld() == 0 ? now : null;
      Thread.sleep(QUIET_FOR.toMillis());
    }
    return false;
  }
}
