package org.rhumbatron.bench;

import java.time.Duration;

/**
 * The CPU time that a benchmark phase costs: this JVM's, and its child processes' (the private
 * nats-server that a bench without {@code --nats} starts), so that a phase's figure can hold the
 * server's share of the work too. A server that is not a child (a {@code --nats} URL) is not in it.
 */
final class CpuTime {
  private CpuTime() {}

  /** CPU nanoseconds used so far by this process. */
  static long jvmNanosNow() {
    return nanosOf(ProcessHandle.current());
  }

  /** CPU nanoseconds used so far by this process's live children. */
  static long childrenNanosNow() {
    return ProcessHandle.current().children().mapToLong(CpuTime::nanosOf).sum();
  }

  /** Whether a child process (a private nats-server) is counted. */
  static boolean countsChildren() {
    return ProcessHandle.current().children().findAny().isPresent();
  }

  private static long nanosOf(ProcessHandle process) {
    return process.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
  }
}
