package org.rhumbatron.lifecycle.tasks;

import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.rhumbatron.lifecycle.StoredStates;

/**
 * The state of a Task, as {@code tasks.state} stores it (lower case), and the moves between states
 * that the Task's state machine allows ({@link #canMoveTo}); {@link TaskLedger} writes no other.
 */
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

  private static final Map<TaskState, Set<TaskState>> NEXT = new EnumMap<>(TaskState.class);

  static {
    NEXT.put(PENDING, EnumSet.of(READY, CANCELLED));
    NEXT.put(READY, EnumSet.of(ASSIGNED, BLOCKED, CANCELLED));
    NEXT.put(ASSIGNED, EnumSet.of(RUNNING, FAILED, BLOCKED, CANCELLED));
    NEXT.put(RUNNING, EnumSet.of(COMPLETED, FAILED, CANCELLED));
    // Verification rejected the Change's Candidate: its work graph runs again.
    NEXT.put(COMPLETED, EnumSet.of(PENDING));
    // change.settle gives a failed or blocked Task its next attempt.
    NEXT.put(FAILED, EnumSet.of(READY));
    NEXT.put(BLOCKED, EnumSet.of(READY));
    NEXT.put(CANCELLED, EnumSet.noneOf(TaskState.class));
  }

  /** Whether a Task in this state may move to {@code to}. */
  public boolean canMoveTo(TaskState to) {
    return NEXT.get(this).contains(to);
  }

  /** The states from which a Task may move to {@code to}. */
  public static Set<TaskState> movingTo(TaskState to) {
    Set<TaskState> from = EnumSet.noneOf(TaskState.class);
    NEXT.forEach(
        (state, next) -> {
          if (next.contains(to)) {
            from.add(state);
          }
        });
    return Collections.unmodifiableSet(from);
  }

  public String dbName() {
    return StoredStates.dbName(this);
  }

  public static TaskState fromDb(String value) {
    return StoredStates.parse(TaskState.class, value, "tasks");
  }
}
