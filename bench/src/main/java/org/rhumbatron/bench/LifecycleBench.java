package org.rhumbatron.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nats.client.Connection;
import io.nats.client.JetStreamManagement;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.rhumbatron.coordinator.outbox.OutboxRowState;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.changes.ChangeCreated;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.workload.LifecycleWorkload;

/**
 * The lifecycle benchmark: Changes of {@link LifecycleWorkload#twentyTasks} driven from {@code
 * createChange} through {@code verifying} to {@code completed} through a real core (outbox,
 * publisher, router, queues, the integration consumer, the wake consumer, the verification and
 * release Workflows) with simulated Agents of zero step delay, a verifier and release of zero
 * duration, {@code changes.auto-approve} and a live app on every Project. It reports Changes and
 * Tasks per second to verifying, the time from a Task's completion to the wake of the Task it made
 * ready, Changes per second to completed and their created-to-completed and verifying-to-completed
 * times, the Candidates that went stale, all read from the database afterwards, and the outbox and
 * router figures of the same rounds.
 *
 * <p>The core is its own: on a server that is not the bench's own it refuses a COMMANDS stream or
 * event streams that hold messages or consumers (a core runs, or ran, there). Afterwards it purges
 * them and deletes their consumers, the queue and router consumers its core made, so that the next
 * bench on the server (bench commands refuses a COMMANDS stream with consumers) is not refused.
 */
final class LifecycleBench {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long POLL_MILLIS = 5;
  private static final long SETTLE_MILLIS = 30_000;
  private static final String PROJECTOR = LifecycleFigures.PROJECTOR;
  private static final String CAUSAL = LifecycleFigures.CAUSAL;

  /** Zero-delay Agents, verifier and release; the verification Workflow approves at once. */
  private static final Settings SETTINGS =
      Settings.defaults()
          .with(
              Map.of(
                  Settings.SIMULATED_STEP_DELAY.key(),
                  "0ms",
                  Settings.SIMULATED_VERIFIER_DURATION.key(),
                  "0ms",
                  Settings.SIMULATED_RELEASE_DURATION.key(),
                  "0ms",
                  Settings.AUTO_APPROVE.key(),
                  "true"));

  private static final long CONFLICT_REVIEW_MILLIS =
      SETTINGS.get(Settings.INTEGRATION_CONFLICT_REVIEW_DELAY).toMillis();

  /** The stages of a completion's path to the next wake, in order, as the JSON names them. */
  static final List<String> STAGES = LifecycleFigures.STAGES;

  private final String natsUrl;
  private final Path dataDir;
  private final String dbUrl;
  private final int changes;
  private final int projects;
  private final int rounds;
  private final Duration warmup;
  private final boolean ownServer;
  private final LifecycleWorkload.Scopes scopes;
  private final int nodes;
  private final EnvelopeCodec codec = new EnvelopeCodec();
  // Project ids of this run: ids (and the command and event ids derived from them) that no earlier
  // run used, so that neither a kept database nor the streams' duplicate window knows them.
  private final String runId = Long.toString(Clock.systemUTC().millis(), 36);

  LifecycleBench(
      String natsUrl,
      Path dataDir,
      String dbUrl,
      int changes,
      int projects,
      int rounds,
      Duration warmup,
      boolean ownServer,
      LifecycleWorkload.Scopes scopes,
      int nodes) {
    this.natsUrl = natsUrl;
    this.dataDir = dataDir;
    this.dbUrl = dbUrl;
    this.changes = changes;
    this.projects = projects;
    this.rounds = rounds;
    this.warmup = warmup;
    this.ownServer = ownServer;
    this.scopes = scopes;
    this.nodes = nodes;
  }

  String run() throws Exception {
    Settings settings = SETTINGS;
    try (Connection nats = JetStreamConnections.connect(natsUrl, "rhumbatron-bench-lifecycle")) {
      JetStreamManagement jsm = nats.jetStreamManagement();
      if (!ownServer) {
        // before the bench changes anything on the server or in --db
        BenchStreams.refuseBusyServer(jsm);
      }
      new JetStreamTopology(nats, settings).ensure();
      BenchStreams.clear(jsm);
      try {
        return measure(settings);
      } finally {
        BenchStreams.clear(jsm); // as it found them: the next bench on this server is not refused
      }
    }
  }

  private String measure(Settings settings) throws Exception {
    List<LifecycleRound> measured = new ArrayList<>();
    int warmRounds = 0;
    String dialect;
    try (BenchNodes cores = BenchNodes.start(nodes, natsUrl, dataDir, dbUrl, settings)) {
      Database db = cores.database();
      dialect = db.dialect().name();
      // Warm-up rounds at full size, at least one and for the warm-up time: the JIT compiles
      // for seconds, and after a single warm-up round the rates still rose round by round.
      long warmUntil = System.nanoTime() + warmup.toNanos();
      do {
        round(cores, db, "w" + warmRounds++);
      } while (System.nanoTime() < warmUntil);
      for (int r = 1; r <= rounds; r++) {
        measured.add(round(cores, db, "r" + r));
      }
    }

    ObjectNode out = JSON.createObjectNode();
    out.put("bench", "lifecycle");
    out.put("database", dialect);
    out.put("nats", natsUrl);
    out.put("nodes", nodes);
    out.put("changes", changes);
    out.put("projects", projects);
    out.put("tasks_per_change", LifecycleWorkload.TASKS);
    out.put("scopes", scopes.name().toLowerCase(java.util.Locale.ROOT));
    out.put("agents_per_change", settings.get(Settings.AGENTS_PER_CHANGE));
    out.put("step_delay_ms", settings.get(Settings.SIMULATED_STEP_DELAY).toMillis());
    out.put("verifier_duration_ms", settings.get(Settings.SIMULATED_VERIFIER_DURATION).toMillis());
    out.put("auto_approve", settings.get(Settings.AUTO_APPROVE));
    out.put("warmup_seconds", warmup.toSeconds());
    out.put("warmup_rounds", warmRounds);
    LifecycleReport report = new LifecycleReport(measured);
    report.putLifecycle(out, CONFLICT_REVIEW_MILLIS);
    report.putOutboxAndRouter(out);
    report.putCpu(out);
    report.putEachRound(out);
    return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(out);
  }

  /**
   * One round: {@code projects} new Projects provisioned, each with a live app (not measured), then
   * {@code changes} Changes created at once, spread over them and round-robin over the nodes'
   * lifecycles, until every one is verifying and then until every one is completed; then its
   * figures from the database, once its Events are published and applied.
   */
  private LifecycleRound round(BenchNodes cores, Database db, String r) throws Exception {
    Lifecycle lifecycle = cores.lifecycle(0);
    List<String> projectIds = new ArrayList<>();
    for (int p = 0; p < projects; p++) {
      projectIds.add("p-bench-lc-" + runId + "-" + r + "-" + p);
    }
    LifecycleWorkload.provisionWithLiveApps(
        lifecycle, projectIds, "tenant-bench", db.clock(), Duration.ofMillis(SETTLE_MILLIS));

    Thread.sleep(2); // the round's rows are those from startMs on: none of provisioning's
    long startMs = db.clock().millis();
    long jvm = CpuTime.jvmNanosNow();
    long children = CpuTime.childrenNanosNow();
    long wall = System.nanoTime();
    List<CompletableFuture<ChangeCreated>> creates = new ArrayList<>();
    for (int c = 0; c < changes; c++) {
      WorkGraph graph =
          LifecycleWorkload.twentyTasks(
              scopes == LifecycleWorkload.Scopes.SHARED ? "src/" : "src/c" + c + "/");
      creates.add(
          cores
              .lifecycle(c)
              .changes()
              .create(projectIds.get(c % projects), "bench-" + r + "-c" + c, graph));
    }
    List<String> changeIds = new ArrayList<>();
    for (CompletableFuture<ChangeCreated> f : creates) {
      changeIds.add(f.get().change().changeId());
    }
    awaitVerifying(lifecycle, changeIds);
    long verifyingNanos = System.nanoTime() - wall;
    awaitCompleted(lifecycle, changeIds);
    long wallNanos = System.nanoTime() - wall;
    long jvmNanos = CpuTime.jvmNanosNow() - jvm;
    long serverNanos = CpuTime.childrenNanosNow() - children;

    awaitApplied(db, projectIds, startMs);
    return new LifecycleFigures(db, codec, projectIds, startMs, CONFLICT_REVIEW_MILLIS)
        .read(
            changeIds,
            new LifecycleFigures.Timing(changes, verifyingNanos, wallNanos, jvmNanos, serverNanos));
  }

  /**
   * Polls the Changes in order until each is verifying (or past it: the verification Workflow goes
   * on); one read per poll while one is open.
   */
  private void awaitVerifying(Lifecycle lifecycle, List<String> changeIds) throws Exception {
    long deadline = System.nanoTime() + (60_000L + 2_000L * changeIds.size()) * 1_000_000L;
    int done = 0;
    while (done < changeIds.size()) {
      ChangeInfo c = lifecycle.changes().change(changeIds.get(done)).orElseThrow();
      if (c.reachedVerification()) {
        done++;
        continue;
      }
      if (c.changeState() != ChangeState.OPEN) {
        throw new IllegalStateException(
            "change " + c.changeId() + " is " + c.state() + " (" + c.reason() + "), not verifying");
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            done + " of " + changeIds.size() + " changes verifying; " + c.changeId() + " is open");
      }
      Thread.sleep(POLL_MILLIS);
    }
  }

  /**
   * Polls the Changes in order until each is completed; a Change that ends otherwise (failed,
   * declined, ...) is an error of the bench, named with its state and reason.
   */
  private void awaitCompleted(Lifecycle lifecycle, List<String> changeIds) throws Exception {
    long deadline = System.nanoTime() + (180_000L + 2_000L * changeIds.size()) * 1_000_000L;
    int done = 0;
    while (done < changeIds.size()) {
      ChangeInfo c = lifecycle.changes().change(changeIds.get(done)).orElseThrow();
      if (c.changeState() == ChangeState.COMPLETED) {
        done++;
        continue;
      }
      if (c.ended()) {
        throw new IllegalStateException(
            "change "
                + c.changeId()
                + " ended "
                + c.state()
                + " ("
                + c.reason()
                + "), not completed");
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            done
                + " of "
                + changeIds.size()
                + " changes completed; "
                + c.changeId()
                + " is "
                + c.state());
      }
      Thread.sleep(POLL_MILLIS);
    }
  }

  /**
   * Waits (at most 30 s) until the round's outbox rows are published and both router subscriptions
   * have applied them, so that the round's figures hold all its Events.
   */
  private void awaitApplied(Database db, List<String> projectIds, long startMs) throws Exception {
    long deadline = System.nanoTime() + SETTLE_MILLIS * 1_000_000L;
    String in = LifecycleFigures.in(projectIds);
    Object[] unpublished =
        LifecycleFigures.args(projectIds, startMs, OutboxRowState.PUBLISHED.dbName());
    Object[] unapplied = LifecycleFigures.args(projectIds, startMs, PROJECTOR, CAUSAL);
    while (System.nanoTime() < deadline) {
      long[] counts =
          db.read(
              tx ->
                  new long[] {
                    tx.queryLong(
                        "SELECT COUNT(*) FROM outbox WHERE project_id IN "
                            + in
                            + " AND created_at_ms >= ? AND state <> ?",
                        unpublished),
                    tx.queryLong(
                        "SELECT COUNT(*) FROM outbox o WHERE o.project_id IN "
                            + in
                            + " AND o.created_at_ms >= ? AND (SELECT COUNT(*) FROM"
                            + " processed_events p WHERE p.event_id = o.event_id"
                            + " AND p.consumer IN (?, ?)) < 2",
                        unapplied)
                  });
      if (counts[0] == 0 && counts[1] == 0) {
        return;
      }
      Thread.sleep(20);
    }
  }
}
