package org.rhumbatron.lifecycle.tasks;

import java.util.List;

/**
 * A Task as its row holds it.
 *
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
    TaskState taskState,
    List<String> dependsOn,
    List<String> resourceScopes,
    String agentId,
    int attempt,
    String lastError,
    String endReason) {

  /** The state by the name the API, the Events and the database use. */
  public String state() {
    return taskState.dbName();
  }

  /** An Agent holds the Task. */
  public boolean held() {
    return TaskState.HELD.contains(taskState);
  }

  /** The Task's attempt ended without success. */
  public boolean failed() {
    return taskState == TaskState.FAILED || taskState == TaskState.BLOCKED;
  }

  public boolean completed() {
    return taskState == TaskState.COMPLETED;
  }

  /** It had not ended when its Change ended ({@link #endReason} says how the Change ended). */
  public boolean cancelled() {
    return taskState == TaskState.CANCELLED;
  }

  public TaskInfo withState(TaskState state, String agent, int attemptNow) {
    return new TaskInfo(
        taskId,
        changeId,
        projectId,
        key,
        title,
        state,
        dependsOn,
        resourceScopes,
        agent,
        attemptNow,
        lastError,
        endReason);
  }
}
