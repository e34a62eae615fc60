package org.rhumbatron.app;

import java.util.ArrayList;
import java.util.List;
import org.rhumbatron.lifecycle.WorkGraph;
import org.rhumbatron.lifecycle.WorkGraph.TaskSpec;

/** Work graphs of the lifecycle benchmark, which the lifecycle tests run too. */
final class LifecycleWorkload {
  /** How many Tasks {@link #twentyTasks} has. */
  static final int TASKS = 20;

  /** How many of them are roots; the others each depend on two earlier Tasks. */
  static final int ROOTS = 12;

  private LifecycleWorkload() {}

  /**
   * 20 Tasks: 12 roots (more than the 8 Agents a Change may hold at once), then 8 that each depend
   * on two earlier Tasks; resource scopes over four source folders, two per Task.
   */
  static WorkGraph twentyTasks() {
    List<TaskSpec> tasks = new ArrayList<>();
    for (int i = 1; i <= TASKS; i++) {
      List<String> deps = new ArrayList<>();
      if (i > ROOTS) {
        deps.add(key(i - ROOTS));
        deps.add(key(i - 5));
      }
      tasks.add(
          new TaskSpec(
              key(i),
              "task " + i,
              deps,
              List.of("path:src/mod" + (i % 4) + "/", "path:src/mod" + (i % 4) + "/f" + i)));
    }
    return new WorkGraph(tasks);
  }

  static String key(int i) {
    return String.format("t%02d", i);
  }
}
