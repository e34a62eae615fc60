package org.rhumbatron.lifecycle;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/** The state of a Task, as {@code tasks.state} stores it (lower case). */
public enum TaskState {
  PENDING,
  READY,
  ASSIGNED,
  RUNNING,
  COMPLETED,
  FAILED,
  /** A dead letter stopped it ({@code blocked_limit} says why). */
  BLOCKED,
  /** It had not ended when its Change ended. */
  CANCELLED;

  /** The states of a Task that has not ended: its Change's end cancels it. */
  public static final Set<TaskState> UNENDED =
      Collections.unmodifiableSet(EnumSet.of(PENDING, READY, ASSIGNED, RUNNING));

  /** The states in which an Agent holds the Task. */
  public static final Set<TaskState> HELD =
      Collections.unmodifiableSet(EnumSet.of(ASSIGNED, RUNNING));

  public String dbName() {
    return StoredStates.dbName(this);
  }

  static TaskState fromDb(String value) {
    return StoredStates.parse(TaskState.class, value, "tasks");
  }
}
