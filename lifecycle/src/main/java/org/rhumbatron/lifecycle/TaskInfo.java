package org.rhumbatron.lifecycle;

import java.util.List;

/**
 * A Task as its row holds it.
 *
 * @param state pending, ready, assigned, running, completed, failed, blocked or cancelled (it had
 *     not ended when its Change ended)
 * @param attempt the current attempt, 0 before the Task was first ready
 * @param agentId the Agent admitted for the current attempt, or null
 * @param endReason why a cancelled Task ended ({@code change_failed}, {@code change_cancelled},
 *     {@code change_declined}, {@code change_not_selected}), or null
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
    String lastError,
    String endReason) {

  /** The states of a Task that has not ended: its Change's end cancels it. */
  public static final List<String> UNENDED_STATES =
      List.of("pending", "ready", "assigned", "running");

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

  /** It had not ended when its Change ended ({@link #endReason} says how the Change ended). */
  public boolean cancelled() {
    return "cancelled".equals(state);
  }
}
