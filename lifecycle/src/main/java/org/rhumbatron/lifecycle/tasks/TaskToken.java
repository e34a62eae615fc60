package org.rhumbatron.lifecycle.tasks;

import java.time.Instant;

/**
 * What a verified task token authorises: the reports of Agent {@code agentId} on attempt {@code
 * attempt} of Task {@code taskId}, until {@code expiresAt} or the attempt's end, whichever comes
 * first.
 */
public record TaskToken(String taskId, int attempt, String agentId, Instant expiresAt) {

  /** Whether a report of {@code ref} is one this token authorises. */
  public boolean covers(TaskRef ref) {
    return taskId.equals(ref.taskId()) && agentId.equals(ref.agentId()) && attempt == ref.attempt();
  }

  /** Whether the attempt this token names is the one {@code task} is held on now. */
  public boolean attemptHeld(TaskInfo task) {
    return task.held()
        && taskId.equals(task.taskId())
        && agentId.equals(task.agentId())
        && attempt == task.attempt();
  }
}
