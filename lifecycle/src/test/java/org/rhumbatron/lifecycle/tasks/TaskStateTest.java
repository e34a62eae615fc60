package org.rhumbatron.lifecycle.tasks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TaskStateTest {
  /** The Task's state machine, written out: DESIGN's diagram plus the moves settle and ends add. */
  private static final List<String> MOVES =
      List.of(
          "pending -> ready",
          "pending -> cancelled",
          "ready -> assigned",
          "ready -> blocked",
          "ready -> cancelled",
          "assigned -> running",
          "assigned -> failed",
          "assigned -> blocked",
          "assigned -> cancelled",
          "running -> completed",
          "running -> failed",
          "running -> cancelled",
          "completed -> pending",
          "failed -> ready",
          "blocked -> ready");

  @Test
  void theStateMachineAllowsExactlyItsMoves() {
    List<String> allowed = new ArrayList<>();
    for (TaskState from : TaskState.values()) {
      for (TaskState to : TaskState.values()) {
        if (from.canMoveTo(to)) {
          allowed.add(from.dbName() + " -> " + to.dbName());
        }
      }
    }
    assertThat(allowed).containsExactlyInAnyOrderElementsOf(MOVES);
  }

  @Test
  void aDeadLetterBlocksOnlyATaskThatNoAgentRuns() {
    assertThat(TaskState.movingTo(TaskState.BLOCKED))
        .containsExactlyInAnyOrder(TaskState.READY, TaskState.ASSIGNED);
  }

  @Test
  void anIllegalMoveThrowsBeforeItTouchesTheTransaction() {
    TaskInfo cancelled = task(TaskState.CANCELLED);
    // A null transaction: the check must fail before any SQL would run.
    assertThatThrownBy(() -> TaskLedger.start(null, cancelled, 0))
        .isInstanceOf(IllegalTaskTransitionException.class)
        .hasMessageContaining("task tsk_1 cannot move from cancelled to running");
    assertThatThrownBy(
            () -> TaskLedger.finish(null, task(TaskState.PENDING), TaskState.COMPLETED, null, 0))
        .isInstanceOf(IllegalTaskTransitionException.class)
        .hasMessageContaining("from pending to completed");
  }

  private static TaskInfo task(TaskState state) {
    return new TaskInfo(
        "tsk_1", "chg_1", "prj_1", "a", "A", state, List.of(), List.of(), null, 1, null, null);
  }
}
