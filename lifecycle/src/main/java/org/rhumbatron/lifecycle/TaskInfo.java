package org.rhumbatron.lifecycle;

import java.util.List;

/**
 * A Task as its row holds it.
 *
 * @param state pending, ready, assigned, running, completed, failed or blocked
 * @param attempt the current attempt, 0 before the Task was first ready
 * @param agentId the Agent admitted for the current attempt, or null
 */
public record TaskInfo(
    String taskId,
    String changeId,
    String projectId,
    String key,
    String title,
    String state,
    List<String> dependsOn,
    List<String> resourceScopes,
    String agentId,
    int attempt,
    String lastError) {

  /** An Agent holds the Task. */
  public boolean held() {
    return "assigned".equals(state) || "running".equals(state);
  }

  /** The Task's attempt ended without success. */
  public boolean failed() {
    return "failed".equals(state) || "blocked".equals(state);
  }

  public boolean completed() {
    return "completed".equals(state);
  }
}
