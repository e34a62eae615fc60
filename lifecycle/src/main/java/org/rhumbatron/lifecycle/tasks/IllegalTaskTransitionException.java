package org.rhumbatron.lifecycle.tasks;

import org.rhumbatron.lifecycle.LifecycleException;

/** A write would move a Task between two states its state machine does not join; none was made. */
public final class IllegalTaskTransitionException extends LifecycleException {
  public IllegalTaskTransitionException(String taskId, TaskState from, TaskState to) {
    super(
        "task "
            + taskId
            + " cannot move from "
            + from.dbName()
            + " to "
            + to.dbName()
            + " (it may move to "
            + java.util.Arrays.stream(TaskState.values())
                .filter(from::canMoveTo)
                .map(TaskState::dbName)
                .toList()
            + ")",
        true);
  }
}
