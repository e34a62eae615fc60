package org.rhumbatron.server;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import org.rhumbatron.lifecycle.Lifecycle;

/** Steps of the lifecycle tests on a running core: a provisioned Project, a Change's state. */
public final class LifecycleSteps {
  private LifecycleSteps() {}

  public static void provision(Lifecycle lifecycle, String projectId) throws Exception {
    lifecycle.commands().provisionProject(projectId, "tenant-1", "Project " + projectId).get();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> lifecycle.projects().project(projectId).isPresent());
  }

  /** Waits until the Change is in {@code state}. */
  public static void awaitState(Lifecycle lifecycle, String changeId, String state, int seconds) {
    await()
        .atMost(Duration.ofSeconds(seconds))
        .until(() -> lifecycle.changes().change(changeId).orElseThrow().state().equals(state));
  }
}
