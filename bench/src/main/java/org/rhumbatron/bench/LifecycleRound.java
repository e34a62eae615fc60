package org.rhumbatron.bench;

import java.util.List;
import org.rhumbatron.workload.LatencyStats;
import org.rhumbatron.workload.LifecycleWorkload;

/**
 * A measured round's figures; latencies in nanoseconds, from the database's milliseconds. {@code
 * verifyingNanos} is the wall time until every Change was verifying, {@code wallNanos} until every
 * one was completed (the CPU figures' time).
 */
record LifecycleRound(
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
