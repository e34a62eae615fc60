package org.rhumbatron.bench;

/** A measured phase: its rate, its wall time, and the CPU time of this JVM and its children. */
record RouterPhase(double perSecond, long wallNanos, long jvmCpuNanos, long serverCpuNanos) {
  double cpuMicrosPerEvent(int events) {
    return (jvmCpuNanos + serverCpuNanos) / 1e3 / events;
  }

  double serverCpuMicrosPerEvent(int events) {
    return serverCpuNanos / 1e3 / events;
  }

  double coresBusy() {
    return (double) (jvmCpuNanos + serverCpuNanos) / wallNanos;
  }

  @FunctionalInterface
  interface Rate {
    double perSecond() throws Exception;
  }

  /** Runs {@code rate}'s phase and measures it. */
  static RouterPhase measure(Rate rate) throws Exception {
    long jvm = CpuTime.jvmNanosNow();
    long children = CpuTime.childrenNanosNow();
    long wall = System.nanoTime();
    double perSecond = rate.perSecond();
    return new RouterPhase(
        perSecond,
        System.nanoTime() - wall,
        CpuTime.jvmNanosNow() - jvm,
        CpuTime.childrenNanosNow() - children);
  }
}
