package org.rhumbatron.bench;

import static org.rhumbatron.bench.BenchRounds.each;
import static org.rhumbatron.bench.BenchRounds.median;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nats.client.Connection;
import io.nats.client.JetStreamManagement;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToDoubleFunction;
import org.rhumbatron.lifecycle.ChangeCreated;
import org.rhumbatron.lifecycle.ChangeInfo;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.WorkGraph;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.workload.LatencyStats;
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
  private static final String PROJECTOR = Subscription.PROJECT_VIEW_PROJECTOR.durableName();
  private static final String CAUSAL = Subscription.CAUSAL_ROUTER.durableName();

  /** Zero-delay Agents, verifier and release; the verification Workflow approves at once. */
  private static final Settings SETTINGS =
      Settings.defaults()
          .with(
              Map.of(
                  Settings.SIMULATED_STEP_DELAY.key(),
                  "0ms",
                  Settings.SIMULATED_VERIFIER_DURATION.key(),
                  "0ms",
                  Settings.AUTO_APPROVE.key(),
                  "true"));

  private static final long CONFLICT_REVIEW_MILLIS =
      SETTINGS.get(Settings.INTEGRATION_CONFLICT_REVIEW_DELAY).toMillis();

  /** The stages of a completion's path to the next wake, in order, as the JSON names them. */
  static final List<String> STAGES =
      List.of("commit_to_published", "published_to_routed", "routed_to_ready", "ready_to_woken");

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
    List<Round> measured = new ArrayList<>();
    int warmRounds = 0;
    String dialect;
    try (BenchNodes cores = BenchNodes.start(nodes, natsUrl, dataDir, dbUrl, settings)) {
      Database db = cores.database();
      dialect = db.dialect().name();
      // Warm-up rounds at full size, at least one and for the warm-up time: the JIT compiles
      // for seconds, and after a single warm-up round the rates still rose round by round
      // (7.6, 10.0, 10.8 Changes/s with --changes 50). Then the measured rounds.
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
    out.put("changes_per_s", median(each(measured, Round::changesPerSecond), 1));
    out.put("tasks_per_s", median(each(measured, Round::tasksPerSecond), 1));

    ObjectNode wake = out.putObject("completed_to_next_wake_ms");
    LatencyStats.put(wake, pooled(measured, Round::completedToWoken), 50, 99);
    wake.put("waited_for_agent", measured.stream().mapToInt(Round::waitedForAgent).sum());
    ObjectNode stages = out.putObject("stages_ms");
    for (int s = 0; s < STAGES.size(); s++) {
      int stage = s;
      long[] samples = pooled(measured, r -> r.stages().get(stage));
      ObjectNode node = stages.putObject(STAGES.get(s));
      node.put("p50", LatencyStats.millis(LatencyStats.percentile(samples, 50)));
      node.put("p99", LatencyStats.millis(LatencyStats.percentile(samples, 99)));
    }

    out.put("completed_changes_per_s", median(each(measured, Round::completedPerSecond), 1));
    LatencyStats.put(
        out.putObject("created_to_completed_ms"),
        pooled(measured, Round::createdToCompleted),
        50,
        99);
    LatencyStats.put(
        out.putObject("verifying_to_completed_ms"),
        pooled(measured, Round::verifyingToCompleted),
        50,
        99);
    out.put("stale_candidates_per_round", Math.round(median(each(measured, r -> r.stale()))));
    out.put("conflict_review_ms", CONFLICT_REVIEW_MILLIS);
    out.put(
        "conflict_review_waits_per_round",
        Math.round(median(each(measured, r -> r.conflictReviews()))));

    ObjectNode outbox = out.putObject("outbox");
    outbox.put("rows_per_round", Math.round(median(each(measured, r -> r.outboxRows()))));
    outbox.put("published_per_round", Math.round(median(each(measured, r -> r.published()))));
    outbox.put("published_per_s", median(each(measured, Round::publishedPerSecond), 1));
    ObjectNode commit = outbox.putObject("commit_to_published_ms");
    LatencyStats.put(commit, pooled(measured, Round::commitToPublished), 50, 99);

    ObjectNode router = out.putObject("router_applied_per_round");
    router.put(PROJECTOR, Math.round(median(each(measured, r -> r.projected()))));
    router.put(CAUSAL, Math.round(median(each(measured, r -> r.routed()))));

    ObjectNode cpu = out.putObject("cpu_us_per_event");
    cpu.put("includes_nats_server", CpuTime.countsChildren());
    cpu.put("round", median(each(measured, Round::cpuMicrosPerEvent), 1));
    cpu.put("of_which_nats_server", median(each(measured, Round::serverCpuMicrosPerEvent), 1));
    out.put("cores_busy", median(each(measured, Round::coresBusy), 2));
    out.put("cores", Runtime.getRuntime().availableProcessors());

    ObjectNode each = out.putObject("rounds");
    putEach(each, "changes_per_s", measured, Round::changesPerSecond, 1);
    putEach(each, "tasks_per_s", measured, Round::tasksPerSecond, 1);
    putEach(each, "completed_to_next_wake_p50_ms", measured, r -> r.wakePercentile(50), 2);
    putEach(each, "completed_to_next_wake_p99_ms", measured, r -> r.wakePercentile(99), 2);
    putEach(each, "completed_changes_per_s", measured, Round::completedPerSecond, 1);
    putEach(each, "stale_candidates", measured, r -> r.stale(), 0);
    putEach(each, "conflict_review_waits", measured, r -> r.conflictReviews(), 0);
    putEach(each, "cores_busy", measured, Round::coresBusy, 2);
    return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(out);
  }

  /**
   * One round: {@code projects} new Projects provisioned, each with a live app (not measured), then
   * {@code changes} Changes created at once, spread over them and round-robin over the nodes'
   * lifecycles, until every one is verifying and then until every one is completed; then its
   * figures from the database, once its Events are published and applied.
   */
  private Round round(BenchNodes cores, Database db, String r) throws Exception {
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
              .createChange(projectIds.get(c % projects), "bench-" + r + "-c" + c, graph));
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
    return figures(
        db, projectIds, changeIds, startMs, verifyingNanos, wallNanos, jvmNanos, serverNanos);
  }

  /**
   * Polls the Changes in order until each is verifying (or past it: the verification Workflow goes
   * on); one read per poll while one is open.
   */
  private void awaitVerifying(Lifecycle lifecycle, List<String> changeIds) throws Exception {
    long deadline = System.nanoTime() + (60_000L + 2_000L * changeIds.size()) * 1_000_000L;
    int done = 0;
    while (done < changeIds.size()) {
      ChangeInfo c = lifecycle.change(changeIds.get(done)).orElseThrow();
      if (c.reachedVerification()) {
        done++;
        continue;
      }
      if (!c.state().equals("open")) {
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
      ChangeInfo c = lifecycle.change(changeIds.get(done)).orElseThrow();
      if (c.state().equals("completed")) {
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
    String in = in(projectIds);
    Object[] args = args(projectIds, startMs);
    while (System.nanoTime() < deadline) {
      long[] counts =
          db.read(
              tx ->
                  new long[] {
                    tx.queryLong(
                        "SELECT COUNT(*) FROM outbox WHERE project_id IN "
                            + in
                            + " AND created_at_ms >= ? AND state <> 'published'",
                        args),
                    tx.queryLong(
                        "SELECT COUNT(*) FROM outbox o WHERE o.project_id IN "
                            + in
                            + " AND o.created_at_ms >= ? AND (SELECT COUNT(*) FROM"
                            + " processed_events p WHERE p.event_id = o.event_id AND p.consumer IN"
                            + " ('"
                            + PROJECTOR
                            + "', '"
                            + CAUSAL
                            + "')) < 2",
                        args)
                  });
      if (counts[0] == 0 && counts[1] == 0) {
        return;
      }
      Thread.sleep(20);
    }
  }

  /** An outbox row of the round: its Event decoded for the types the figures read. */
  private record Row(String eventType, long createdMs, Long publishedMs, Event event) {}

  private Round figures(
      Database db,
      List<String> projectIds,
      List<String> changeIds,
      long startMs,
      long verifyingNanos,
      long wallNanos,
      long jvmNanos,
      long serverNanos) {
    String in = in(projectIds);
    Object[] args = args(projectIds, startMs);
    List<Row> rows =
        db.read(
            tx ->
                tx.query(
                    "SELECT event_type, created_at_ms, published_at_ms, payload FROM outbox"
                        + " WHERE project_id IN "
                        + in
                        + " AND created_at_ms >= ?",
                    rs -> {
                      String type = rs.getString(1);
                      long published = rs.getLong(3);
                      Long publishedMs = rs.wasNull() ? null : published;
                      Event e =
                          switch (type) {
                            case "task.completed",
                                "task.ready",
                                "task.assigned",
                                "agent.woken",
                                "verification.started",
                                "candidate.stale",
                                "candidate.created" ->
                                codec.decodeEvent(rs.getBytes(4));
                            default -> null;
                          };
                      return new Row(type, rs.getLong(2), publishedMs, e);
                    },
                    args));
    // consumer -> event id -> processed_at_ms, for the round's Events.
    Map<String, Map<String, Long>> processed = new HashMap<>();
    db.read(
        tx ->
            tx.query(
                "SELECT p.consumer, p.event_id, p.processed_at_ms FROM processed_events p"
                    + " JOIN outbox o ON o.event_id = p.event_id WHERE o.project_id IN "
                    + in
                    + " AND o.created_at_ms >= ?",
                rs ->
                    processed
                        .computeIfAbsent(rs.getString(1), k -> new HashMap<>())
                        .put(rs.getString(2), rs.getLong(3)),
                args));
    // The round's Tasks: their dependencies and when they completed.
    Map<String, List<String>> dependsOn = new HashMap<>();
    Map<String, Long> endedMs = new HashMap<>();
    db.read(
        tx ->
            tx.query(
                "SELECT task_id, depends_on, ended_at_ms FROM tasks WHERE project_id IN " + in,
                rs -> {
                  String task = rs.getString(1);
                  dependsOn.put(task, strings(rs.getString(2)));
                  endedMs.put(task, rs.getLong(3));
                  return task;
                },
                projectIds.toArray()));

    // The round's Changes: created and ended (all completed: awaitCompleted held them to it).
    Map<String, long[]> changeTimes = new HashMap<>();
    db.read(
        tx ->
            tx.query(
                "SELECT change_id, state, created_at_ms, ended_at_ms FROM changes"
                    + " WHERE project_id IN "
                    + in,
                rs -> {
                  if (!"completed".equals(rs.getString(2))) {
                    throw new IllegalStateException(
                        "change " + rs.getString(1) + " is " + rs.getString(2) + ", not completed");
                  }
                  return changeTimes.put(
                      rs.getString(1), new long[] {rs.getLong(3), rs.getLong(4)});
                },
                projectIds.toArray()));
    if (!changeTimes.keySet().equals(new java.util.HashSet<>(changeIds))) {
      throw new IllegalStateException(
          "the round's projects hold changes " + changeTimes.keySet() + ", not " + changeIds);
    }
    long stale =
        db.read(
            tx ->
                tx.queryLong(
                    "SELECT COUNT(*) FROM candidates WHERE state = 'stale' AND project_id IN " + in,
                    projectIds.toArray()));
    Map<String, Long> verificationStarted = new HashMap<>();
    // Per Change: when a candidate.create was due (verification.started, candidate.stale) and when
    // a Candidate was composed.
    Map<String, List<Long>> composeDue = new HashMap<>();
    Map<String, List<Long>> composed = new HashMap<>();
    Map<String, Row> completedById = new HashMap<>();
    Map<String, Row> readyFirst = new HashMap<>();
    Map<String, Row> assignedFirst = new HashMap<>();
    Map<String, Long> wokenFirst = new HashMap<>();
    long[] commitToPublished =
        rows.stream()
            .filter(row -> row.publishedMs() != null)
            .mapToLong(row -> (row.publishedMs() - row.createdMs()) * 1_000_000L)
            .toArray();
    for (Row row : rows) {
      Event e = row.event();
      if (e == null) {
        continue;
      }
      int attempt = e.payload().path("attempt").asInt(0);
      switch (row.eventType()) {
        case "task.completed" -> completedById.put(e.eventId(), row);
        case "task.ready" -> {
          if (attempt == 1) {
            readyFirst.put(e.taskId(), row);
          }
        }
        case "task.assigned" -> {
          if (attempt == 1) {
            assignedFirst.put(e.taskId(), row);
          }
        }
        case "agent.woken" -> {
          // The first wake of the first attempt: the ready wake, or a router's overlap wake of
          // the assigned Agent that came before it.
          if (e.payload().path("attempt").asInt() == 1) {
            wokenFirst.merge(e.taskId(), row.createdMs(), Math::min);
          }
        }
        case "verification.started" -> {
          verificationStarted.merge(e.changeId(), row.createdMs(), Math::min);
          composeDue.computeIfAbsent(e.changeId(), k -> new ArrayList<>()).add(row.createdMs());
        }
        case "candidate.stale" ->
            composeDue.computeIfAbsent(e.changeId(), k -> new ArrayList<>()).add(row.createdMs());
        case "candidate.created" ->
            composed.computeIfAbsent(e.changeId(), k -> new ArrayList<>()).add(row.createdMs());
        default -> {}
      }
    }

    List<Long> wakeSamples = new ArrayList<>();
    List<List<Long>> stages = new ArrayList<>();
    STAGES.forEach(s -> stages.add(new ArrayList<>()));
    int waited = 0;
    for (Map.Entry<String, List<String>> task : dependsOn.entrySet()) {
      if (task.getValue().isEmpty()) {
        continue; // a root: made ready by change.created, not by a completion
      }
      Long woken = wokenFirst.get(task.getKey());
      if (woken == null) {
        throw new IllegalStateException("task " + task.getKey() + " completed without agent.woken");
      }
      long lastDependency = task.getValue().stream().mapToLong(endedMs::get).max().orElseThrow();
      wakeSamples.add(woken - lastDependency);
      Row ready = readyFirst.get(task.getKey());
      Row assigned = assignedFirst.get(task.getKey());
      if (ready == null || assigned == null) {
        continue;
      }
      if (!ready.event().causedBy().equals(assigned.event().causedBy())) {
        waited++; // the dispatch that made it ready found all of the Change's Agents busy
      }
      // The completion whose change.dispatch (cmd_<event id>_dispatch) made the Task ready.
      String cause =
          ready.event().causedBy().replaceFirst("^cmd_", "").replaceFirst("_dispatch$", "");
      Row completed = completedById.get(cause);
      Long routed = processed.getOrDefault(CAUSAL, Map.of()).get(cause);
      if (completed == null || completed.publishedMs() == null || routed == null) {
        continue;
      }
      stages.get(0).add(completed.publishedMs() - completed.createdMs());
      stages.get(1).add(routed - completed.publishedMs());
      stages.get(2).add(ready.createdMs() - routed);
      stages.get(3).add(woken - ready.createdMs());
    }
    List<Long> createdToCompleted = new ArrayList<>();
    List<Long> verifyingToCompleted = new ArrayList<>();
    for (Map.Entry<String, long[]> c : changeTimes.entrySet()) {
      createdToCompleted.add(c.getValue()[1] - c.getValue()[0]);
      Long verifying = verificationStarted.get(c.getKey());
      if (verifying == null) {
        throw new IllegalStateException("change " + c.getKey() + " has no verification.started");
      }
      verifyingToCompleted.add(c.getValue()[1] - verifying);
    }
    // A Candidate composed a conflict review's delay or more after it was due: its candidate.create
    // found the changesets overlapping claims another Change of the Project held, and waited.
    int conflictReviews = 0;
    for (Map.Entry<String, List<Long>> c : composed.entrySet()) {
      List<Long> due = composeDue.getOrDefault(c.getKey(), List.of());
      for (long at : c.getValue()) {
        long since = due.stream().mapToLong(Long::longValue).filter(d -> d <= at).max().orElse(at);
        if (at - since >= CONFLICT_REVIEW_MILLIS) {
          conflictReviews++;
        }
      }
    }
    return new Round(
        changes,
        verifyingNanos,
        wallNanos,
        jvmNanos,
        serverNanos,
        rows.size(),
        commitToPublished.length,
        processed.getOrDefault(PROJECTOR, Map.of()).size(),
        processed.getOrDefault(CAUSAL, Map.of()).size(),
        nanos(wakeSamples),
        waited,
        commitToPublished,
        stages.stream().map(LifecycleBench::nanos).toList(),
        nanos(createdToCompleted),
        nanos(verifyingToCompleted),
        stale,
        conflictReviews);
  }

  /**
   * A measured round's figures; latencies in nanoseconds, from the database's milliseconds. {@code
   * verifyingNanos} is the wall time until every Change was verifying, {@code wallNanos} until
   * every one was completed (the CPU figures' time).
   */
  private record Round(
      int changes,
      long verifyingNanos,
      long wallNanos,
      long jvmCpuNanos,
      long serverCpuNanos,
      int outboxRows,
      int published,
      int projected,
      int routed,
      long[] completedToWoken,
      int waitedForAgent,
      long[] commitToPublished,
      List<long[]> stages,
      long[] createdToCompleted,
      long[] verifyingToCompleted,
      long stale,
      int conflictReviews) {

    double changesPerSecond() {
      return changes / (verifyingNanos / 1e9);
    }

    double tasksPerSecond() {
      return changes * LifecycleWorkload.TASKS / (verifyingNanos / 1e9);
    }

    double completedPerSecond() {
      return changes / (wallNanos / 1e9);
    }

    double publishedPerSecond() {
      return published / (wallNanos / 1e9);
    }

    double cpuMicrosPerEvent() {
      return (jvmCpuNanos + serverCpuNanos) / 1e3 / Math.max(1, outboxRows);
    }

    double serverCpuMicrosPerEvent() {
      return serverCpuNanos / 1e3 / Math.max(1, outboxRows);
    }

    double coresBusy() {
      return (double) (jvmCpuNanos + serverCpuNanos) / wallNanos;
    }

    double wakePercentile(int p) {
      return LatencyStats.millis(LatencyStats.percentile(completedToWoken, p));
    }
  }

  /** A JSON array of strings (tasks.depends_on). */
  private static List<String> strings(String json) {
    try {
      return json == null ? List.of() : JSON.readerForListOf(String.class).readValue(json);
    } catch (IOException e) {
      throw new IllegalStateException("not a JSON array of strings: " + json, e);
    }
  }

  private static String in(List<String> ids) {
    return "(" + String.join(", ", ids.stream().map(id -> "?").toList()) + ")";
  }

  private static Object[] args(List<String> projectIds, long startMs) {
    Object[] args = Arrays.copyOf(projectIds.toArray(), projectIds.size() + 1);
    args[projectIds.size()] = startMs;
    return args;
  }

  private static long[] nanos(List<Long> millis) {
    return millis.stream().mapToLong(ms -> ms * 1_000_000L).toArray();
  }

  private static long[] pooled(List<Round> rounds, java.util.function.Function<Round, long[]> of) {
    return rounds.stream().flatMapToLong(r -> Arrays.stream(of.apply(r))).toArray();
  }

  private static void putEach(
      ObjectNode into,
      String name,
      List<Round> rounds,
      ToDoubleFunction<Round> figure,
      int digits) {
    ArrayNode array = into.putArray(name);
    double scale = Math.pow(10, digits);
    rounds.forEach(r -> array.add(Math.round(figure.applyAsDouble(r) * scale) / scale));
  }
}
