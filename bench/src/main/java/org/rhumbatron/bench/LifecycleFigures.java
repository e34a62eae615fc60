package org.rhumbatron.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import org.rhumbatron.lifecycle.RunReads;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Event;

/**
 * One lifecycle round's figures, read from the database once its Events are published and applied:
 * the round's outbox rows (from {@code startMs} on, in its Projects), their claims by the router
 * subscriptions, its Tasks, Changes and stale Candidates.
 */
final class LifecycleFigures {
  static final String PROJECTOR = Subscription.PROJECT_VIEW_PROJECTOR.durableName();
  static final String CAUSAL = Subscription.CAUSAL_ROUTER.durableName();

  /** The stages of a completion's path to the next wake, in order, as the JSON names them. */
  static final List<String> STAGES =
      List.of("commit_to_published", "published_to_routed", "routed_to_ready", "ready_to_woken");

  /** The round's figures that are not in the database: its size, wall and CPU times. */
  record Timing(
      int changes, long verifyingNanos, long wallNanos, long jvmNanos, long serverNanos) {}

  /** An outbox row of the round: its Event decoded for the types the figures read. */
  private record Row(String eventType, long createdMs, Long publishedMs, Event event) {}

  private final Database db;
  private final RunReads lifecycle;
  private final EnvelopeCodec codec;
  private final List<String> projectIds;
  private final long conflictReviewMillis;
  private final String in;
  private final Object[] args;

  LifecycleFigures(
      Database db,
      EnvelopeCodec codec,
      List<String> projectIds,
      long startMs,
      long conflictReviewMillis) {
    this.db = db;
    this.lifecycle = new RunReads(db);
    this.codec = codec;
    this.projectIds = projectIds;
    this.conflictReviewMillis = conflictReviewMillis;
    this.in = in(projectIds);
    this.args = args(projectIds, startMs);
  }

  /** The round's figures; {@code changeIds} are the Changes it created, all completed. */
  LifecycleRound read(List<String> changeIds, Timing timing) {
    List<Row> rows = rows();
    Map<String, Map<String, Long>> processed = processed();
    Map<String, List<String>> dependsOn = new HashMap<>();
    Map<String, Long> endedMs = new HashMap<>();
    readTasks(dependsOn, endedMs);
    Map<String, long[]> changeTimes = changeTimes(changeIds);
    long stale = lifecycle.staleCandidates(projectIds);
    long[] commitToPublished =
        rows.stream()
            .filter(row -> row.publishedMs() != null)
            .mapToLong(row -> (row.publishedMs() - row.createdMs()) * 1_000_000L)
            .toArray();
    Firsts firsts = new Firsts();
    rows.forEach(firsts::add);
    Wakes wakes = wakes(dependsOn, endedMs, firsts, processed.getOrDefault(CAUSAL, Map.of()));
    List<Long> createdToCompleted = new ArrayList<>();
    List<Long> verifyingToCompleted = new ArrayList<>();
    for (Map.Entry<String, long[]> c : changeTimes.entrySet()) {
      createdToCompleted.add(c.getValue()[1] - c.getValue()[0]);
      Long verifying = firsts.verificationStarted.get(c.getKey());
      if (verifying == null) {
        throw new IllegalStateException("change " + c.getKey() + " has no verification.started");
      }
      verifyingToCompleted.add(c.getValue()[1] - verifying);
    }
    return new LifecycleRound(
        timing.changes(),
        timing.verifyingNanos(),
        timing.wallNanos(),
        timing.jvmNanos(),
        timing.serverNanos(),
        rows.size(),
        commitToPublished.length,
        processed.getOrDefault(PROJECTOR, Map.of()).size(),
        processed.getOrDefault(CAUSAL, Map.of()).size(),
        nanos(wakes.samples()),
        wakes.waited(),
        commitToPublished,
        wakes.stages().stream().map(LifecycleFigures::nanos).toList(),
        nanos(createdToCompleted),
        nanos(verifyingToCompleted),
        stale,
        conflictReviews(firsts));
  }

  private List<Row> rows() {
    return db.read(
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
  }

  /** Consumer to event id to processed_at_ms, for the round's Events. */
  private Map<String, Map<String, Long>> processed() {
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
    return processed;
  }

  /** The round's Tasks: their dependencies and when they completed. */
  private void readTasks(Map<String, List<String>> dependsOn, Map<String, Long> endedMs) {
    for (RunReads.TaskEnd t : lifecycle.taskEnds(projectIds)) {
      dependsOn.put(t.taskId(), t.dependsOn());
      endedMs.put(t.taskId(), t.endedAtMs());
    }
  }

  /** The round's Changes: created and ended (all completed: awaitCompleted held them to it). */
  private Map<String, long[]> changeTimes(List<String> changeIds) {
    Map<String, long[]> changeTimes = new HashMap<>();
    for (RunReads.ChangeTimes c : lifecycle.changeTimes(projectIds)) {
      if (c.state() != ChangeState.COMPLETED) {
        throw new IllegalStateException(
            "change " + c.changeId() + " is " + c.state().dbName() + ", not completed");
      }
      changeTimes.put(c.changeId(), new long[] {c.createdAtMs(), c.endedAtMs()});
    }
    if (!changeTimes.keySet().equals(new HashSet<>(changeIds))) {
      throw new IllegalStateException(
          "the round's projects hold changes " + changeTimes.keySet() + ", not " + changeIds);
    }
    return changeTimes;
  }

  /**
   * The round's decoded rows by what the figures look up: per Task its first attempt's ready and
   * assigned rows and first wake; per Change when verification started, when a candidate.create was
   * due (verification.started, candidate.stale) and when a Candidate was composed.
   */
  private static final class Firsts {
    final Map<String, Long> verificationStarted = new HashMap<>();
    final Map<String, List<Long>> composeDue = new HashMap<>();
    final Map<String, List<Long>> composed = new HashMap<>();
    final Map<String, Row> completedById = new HashMap<>();
    final Map<String, Row> readyFirst = new HashMap<>();
    final Map<String, Row> assignedFirst = new HashMap<>();
    final Map<String, Long> wokenFirst = new HashMap<>();

    void add(Row row) {
      Event e = row.event();
      if (e == null) {
        return;
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
  }

  /** Completion-to-wake times in ms, the same split into {@link #STAGES}, and the waits. */
  private record Wakes(List<Long> samples, List<List<Long>> stages, int waited) {}

  private static Wakes wakes(
      Map<String, List<String>> dependsOn,
      Map<String, Long> endedMs,
      Firsts firsts,
      Map<String, Long> routedAt) {
    List<Long> wakeSamples = new ArrayList<>();
    List<List<Long>> stages = new ArrayList<>();
    STAGES.forEach(s -> stages.add(new ArrayList<>()));
    int waited = 0;
    for (Map.Entry<String, List<String>> task : dependsOn.entrySet()) {
      if (task.getValue().isEmpty()) {
        continue; // a root: made ready by change.created, not by a completion
      }
      Long woken = firsts.wokenFirst.get(task.getKey());
      if (woken == null) {
        throw new IllegalStateException("task " + task.getKey() + " completed without agent.woken");
      }
      long lastDependency = task.getValue().stream().mapToLong(endedMs::get).max().orElseThrow();
      wakeSamples.add(woken - lastDependency);
      Row ready = firsts.readyFirst.get(task.getKey());
      Row assigned = firsts.assignedFirst.get(task.getKey());
      if (ready == null || assigned == null) {
        continue;
      }
      if (!ready.event().causedBy().equals(assigned.event().causedBy())) {
        waited++; // the dispatch that made it ready found all of the Change's Agents busy
      }
      // The completion whose change.dispatch (cmd_<event id>_dispatch) made the Task ready.
      String cause =
          ready.event().causedBy().replaceFirst("^cmd_", "").replaceFirst("_dispatch$", "");
      Row completed = firsts.completedById.get(cause);
      Long routed = routedAt.get(cause);
      if (completed == null || completed.publishedMs() == null || routed == null) {
        continue;
      }
      stages.get(0).add(completed.publishedMs() - completed.createdMs());
      stages.get(1).add(routed - completed.publishedMs());
      stages.get(2).add(ready.createdMs() - routed);
      stages.get(3).add(woken - ready.createdMs());
    }
    return new Wakes(wakeSamples, stages, waited);
  }

  /**
   * Candidates composed a conflict review's delay or more after they were due: their
   * candidate.create found the changesets overlapping claims another Change of the Project held,
   * and waited.
   */
  private int conflictReviews(Firsts firsts) {
    int conflictReviews = 0;
    for (Map.Entry<String, List<Long>> c : firsts.composed.entrySet()) {
      List<Long> due = firsts.composeDue.getOrDefault(c.getKey(), List.of());
      for (long at : c.getValue()) {
        long since = due.stream().mapToLong(Long::longValue).filter(d -> d <= at).max().orElse(at);
        if (at - since >= conflictReviewMillis) {
          conflictReviews++;
        }
      }
    }
    return conflictReviews;
  }

  /** {@code (?, ?, ...)}, one placeholder for each id. */
  static String in(List<String> ids) {
    return "(" + String.join(", ", ids.stream().map(id -> "?").toList()) + ")";
  }

  /**
   * The project ids, then {@code startMs}, then {@code more}: the arguments of {@code IN (...) AND
   * ... >= ?} and what follows.
   */
  static Object[] args(List<String> projectIds, long startMs, Object... more) {
    List<Object> args = new ArrayList<>(projectIds);
    args.add(startMs);
    args.addAll(Arrays.asList(more));
    return args.toArray();
  }

  private static long[] nanos(List<Long> millis) {
    return millis.stream().mapToLong(ms -> ms * 1_000_000L).toArray();
  }
}
