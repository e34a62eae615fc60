package org.rhumbatron.bench;

import static org.rhumbatron.bench.BenchRounds.each;
import static org.rhumbatron.bench.BenchRounds.median;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import org.rhumbatron.workload.LatencyStats;

/**
 * The lifecycle bench's figures over its measured rounds, written into its JSON: rates as the
 * medians of the rounds, latencies pooled over them, and each round's own figures.
 */
final class LifecycleReport {
  private final List<LifecycleRound> measured;

  LifecycleReport(List<LifecycleRound> measured) {
    this.measured = measured;
  }

  /** Rates to verifying, wake latencies and their stages, Change latencies, stale Candidates. */
  void putLifecycle(ObjectNode out, long conflictReviewMillis) {
    out.put("changes_per_s", median(each(measured, LifecycleRound::changesPerSecond), 1));
    out.put("tasks_per_s", median(each(measured, LifecycleRound::tasksPerSecond), 1));

    ObjectNode wake = out.putObject("completed_to_next_wake_ms");
    LatencyStats.put(wake, pooled(measured, LifecycleRound::completedToWoken), 50, 99);
    wake.put("waited_for_agent", measured.stream().mapToInt(LifecycleRound::waitedForAgent).sum());
    ObjectNode stages = out.putObject("stages_ms");
    for (int s = 0; s < LifecycleFigures.STAGES.size(); s++) {
      int stage = s;
      long[] samples = pooled(measured, r -> r.stages().get(stage));
      ObjectNode node = stages.putObject(LifecycleFigures.STAGES.get(s));
      node.put("p50", LatencyStats.millis(LatencyStats.percentile(samples, 50)));
      node.put("p99", LatencyStats.millis(LatencyStats.percentile(samples, 99)));
    }

    out.put(
        "completed_changes_per_s", median(each(measured, LifecycleRound::completedPerSecond), 1));
    LatencyStats.put(
        out.putObject("created_to_completed_ms"),
        pooled(measured, LifecycleRound::createdToCompleted),
        50,
        99);
    LatencyStats.put(
        out.putObject("verifying_to_completed_ms"),
        pooled(measured, LifecycleRound::verifyingToCompleted),
        50,
        99);
    out.put("stale_candidates_per_round", Math.round(median(each(measured, r -> r.stale()))));
    out.put("conflict_review_ms", conflictReviewMillis);
    out.put(
        "conflict_review_waits_per_round",
        Math.round(median(each(measured, r -> r.conflictReviews()))));
  }

  /** The outbox rows and publish latency, and what both router subscriptions applied. */
  void putOutboxAndRouter(ObjectNode out) {
    ObjectNode outbox = out.putObject("outbox");
    outbox.put("rows_per_round", Math.round(median(each(measured, r -> r.outboxRows()))));
    outbox.put("published_per_round", Math.round(median(each(measured, r -> r.published()))));
    outbox.put("published_per_s", median(each(measured, LifecycleRound::publishedPerSecond), 1));
    ObjectNode commit = outbox.putObject("commit_to_published_ms");
    LatencyStats.put(commit, pooled(measured, LifecycleRound::commitToPublished), 50, 99);

    ObjectNode router = out.putObject("router_applied_per_round");
    router.put(LifecycleFigures.PROJECTOR, Math.round(median(each(measured, r -> r.projected()))));
    router.put(LifecycleFigures.CAUSAL, Math.round(median(each(measured, r -> r.routed()))));
  }

  /** CPU per Event, this JVM's and its nats-server's, and the cores that kept busy. */
  void putCpu(ObjectNode out) {
    ObjectNode cpu = out.putObject("cpu_us_per_event");
    cpu.put("includes_nats_server", CpuTime.countsChildren());
    cpu.put("round", median(each(measured, LifecycleRound::cpuMicrosPerEvent), 1));
    cpu.put(
        "of_which_nats_server", median(each(measured, LifecycleRound::serverCpuMicrosPerEvent), 1));
    out.put("cores_busy", median(each(measured, LifecycleRound::coresBusy), 2));
    out.put("cores", Runtime.getRuntime().availableProcessors());
  }

  /** Each round's own figures, one array each. */
  void putEachRound(ObjectNode out) {
    ObjectNode each = out.putObject("rounds");
    putEach(each, "changes_per_s", measured, LifecycleRound::changesPerSecond, 1);
    putEach(each, "tasks_per_s", measured, LifecycleRound::tasksPerSecond, 1);
    putEach(each, "completed_to_next_wake_p50_ms", measured, r -> r.wakePercentile(50), 2);
    putEach(each, "completed_to_next_wake_p99_ms", measured, r -> r.wakePercentile(99), 2);
    putEach(each, "completed_changes_per_s", measured, LifecycleRound::completedPerSecond, 1);
    putEach(each, "stale_candidates", measured, r -> r.stale(), 0);
    putEach(each, "conflict_review_waits", measured, r -> r.conflictReviews(), 0);
    putEach(each, "cores_busy", measured, LifecycleRound::coresBusy, 2);
  }

  private static long[] pooled(List<LifecycleRound> rounds, Function<LifecycleRound, long[]> of) {
    return rounds.stream().flatMapToLong(r -> Arrays.stream(of.apply(r))).toArray();
  }

  private static void putEach(
      ObjectNode into,
      String name,
      List<LifecycleRound> rounds,
      ToDoubleFunction<LifecycleRound> figure,
      int digits) {
    ArrayNode array = into.putArray(name);
    double scale = Math.pow(10, digits);
    rounds.forEach(r -> array.add(Math.round(figure.applyAsDouble(r) * scale) / scale));
  }
}
