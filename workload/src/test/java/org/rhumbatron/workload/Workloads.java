package org.rhumbatron.workload;

import org.rhumbatron.lifecycle.changes.WorkGraph;

/**
 * Work graphs for the lifecycle tests: those of the lifecycle benchmark ({@link
 * LifecycleWorkload}).
 */
public final class Workloads {
  private Workloads() {}

  /** {@link LifecycleWorkload#twentyTasks}: the graph that {@code bench lifecycle} runs. */
  public static WorkGraph twentyTasks() {
    return LifecycleWorkload.twentyTasks();
  }

  static String key(int i) {
    return LifecycleWorkload.key(i);
  }
}
