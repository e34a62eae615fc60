package org.rhumbatron.lifecycle.tasks;

import org.rhumbatron.lifecycle.LifecycleException;

/**
 * An Agent reported for a Task it does not hold (another Agent or attempt holds it, it ended, or
 * its Change is not open). Nothing was written; the Agent should stop working on it.
 */
public final class TaskNotHeldException extends LifecycleException {
  public TaskNotHeldException(String taskId, String agentId, String why) {
    super("agent " + agentId + " does not hold task " + taskId + ": " + why, true);
  }
}
