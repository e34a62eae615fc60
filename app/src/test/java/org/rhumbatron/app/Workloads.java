package org.rhumbatron.app;

import java.util.ArrayList;
import java.util.List;
import org.rhumbatron.lifecycle.WorkGraph;
import org.rhumbatron.lifecycle.WorkGraph.TaskSpec;

/** Work graphs for the lifecycle tests and benchmarks. */
final class Workloads {
  private Workloads() {}

  /**
   * 20 Tasks: 12 roots (more than the 8 Agents a Change may hold at once), then 8 that each depend
   * on two earlier Tasks; resource scopes over four source folders, two per Task.
   */
  static WorkGraph twentyTasks() {
    List<TaskSpec> tasks = new ArrayList<>();
    for (int i = 1; i <= 20; i++) {
      List<String> deps = new ArrayList<>();
      if (i > 12) {
        deps.add(key(i - 12));
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
