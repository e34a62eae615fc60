package org.rhumbatron.bench;

import java.time.Duration;

/**
 * The CPU time that a benchmark phase costs: this JVM's, and its descendant processes' (the private
 * nats-server that a bench without {@code --nats} starts, under its {@code sh} supervisor), so that
 * a phase's figure can hold the server's share of the work too. A server that is not a descendant
 * (a {@code --nats} URL) is not in it.
 */
final class CpuTime {
  private CpuTime() {}

  /** CPU nanoseconds used so far by this process. */
  static long jvmNanosNow() {
    return nanosOf(ProcessHandle.current());
  }

  /** CPU nanoseconds used so far by this process's live descendants, grandchildren included. */
  static long childrenNanosNow() {
    return ProcessHandle.current().descendants().mapToLong(CpuTime::nanosOf).sum();
  }

  /** Whether a descendant process (a private nats-server) is counted. */
  static boolean countsChildren() {
    return ProcessHandle.current().descendants().findAny().isPresent();
  }

  private static long nanosOf(ProcessHandle process) {
    return process.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
  }
}
