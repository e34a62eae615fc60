package org.rhumbatron.workload;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.lifecycle.changes.WorkGraph.TaskSpec;

/**
 * Work graphs of the lifecycle benchmark and the demo, which the lifecycle tests run too, and the
 * Projects they run in.
 */
public final class LifecycleWorkload {
  /** How many Tasks {@link #twentyTasks} has. */
  public static final int TASKS = 20;

  /** How many of them are roots; the others each depend on two earlier Tasks. */
  static final int ROOTS = 12;

  private static final long POLL_MILLIS = 5;

  private LifecycleWorkload() {}

  /**
   * Where the Changes of one Project work: all in the same four source folders, so each Change's
   * Candidate waits for the conflict review of the others, or each Change in folders of its own.
   */
  public enum Scopes {
    SHARED,
    DISJOINT
  }

  /**
   * 20 Tasks: 12 roots (more than the 8 Agents a Change may hold at once), then 8 that each depend
   * on two earlier Tasks; resource scopes over four source folders, two per Task.
   */
  public static WorkGraph twentyTasks() {
    return twentyTasks("src/");
  }

  /** {@link #twentyTasks()} with its four folders under {@code root} (ending in '/'). */
  public static WorkGraph twentyTasks(String root) {
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
              List.of(
                  "path:" + root + "mod" + (i % 4) + "/",
                  "path:" + root + "mod" + (i % 4) + "/f" + i)));
    }
    return new WorkGraph(tasks);
  }

  static String key(int i) {
    return String.format("t%02d", i);
  }

  /**
   * Provisions the Projects through their commands ({@code project.provision}, {@code
   * app.provision}: the release Workflow runs only for a live app) and waits until their handlers
   * made them, at most {@code within}.
   */
  public static void provisionWithLiveApps(
      Lifecycle lifecycle, List<String> projectIds, String tenant, Clock clock, Duration within)
      throws Exception {
    for (String p : projectIds) {
      lifecycle.commands().provisionProject(p, tenant, "project " + p).get();
    }
    long deadline = clock.millis() + within.toMillis();
    for (String p : projectIds) {
      while (lifecycle.projects().project(p).isEmpty()) {
        if (clock.millis() > deadline) {
          throw new IllegalStateException("project " + p + " not provisioned in " + within);
        }
        Thread.sleep(POLL_MILLIS);
      }
    }
    for (String p : projectIds) {
      lifecycle.commands().provisionApp(p).get();
    }
    for (String p : projectIds) {
      while (!lifecycle.projects().project(p).orElseThrow().hasLiveApp()) {
        if (clock.millis() > deadline) {
          throw new IllegalStateException("project " + p + " has no live app after " + within);
        }
        Thread.sleep(POLL_MILLIS);
      }
    }
  }
}
