package org.rhumbatron.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.rhumbatron.lifecycle.candidates.CandidateState;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.tasks.TaskState;

class StoredStatesTest {
  @Test
  void theStoredNamesAreTheLowerCaseNamesOfDesignSection3() {
    assertThat(Arrays.stream(ChangeState.values()).map(ChangeState::dbName))
        .containsExactly(
            "open",
            "verifying",
            "awaiting_approval",
            "releasing",
            "completed",
            "failed",
            "cancelled",
            "not_selected",
            "declined");
    assertThat(Arrays.stream(TaskState.values()).map(TaskState::dbName))
        .containsExactly(
            "pending",
            "ready",
            "assigned",
            "running",
            "completed",
            "failed",
            "blocked",
            "cancelled");
    assertThat(Arrays.stream(CandidateState.values()).map(CandidateState::dbName))
        .containsExactly("open", "verified", "rejected", "promoted", "stale");
    assertThat(ChangeInfo.OPEN_STATES)
        .containsExactly("open", "verifying", "awaiting_approval", "releasing");
  }

  @Test
  void aStoredNameReadsBackAsItsState() {
    assertThat(ChangeState.fromDb("awaiting_approval")).isEqualTo(ChangeState.AWAITING_APPROVAL);
    assertThat(TaskState.fromDb("blocked")).isEqualTo(TaskState.BLOCKED);
    assertThat(CandidateState.fromDb("stale")).isEqualTo(CandidateState.STALE);
  }

  @Test
  void anUnknownStoredNameIsRefusedNamingTheValueAndTheTable() {
    assertThatThrownBy(() -> ChangeState.fromDb("OPEN"))
        .hasMessage("unknown ChangeState 'OPEN' in table changes");
    assertThatThrownBy(() -> TaskState.fromDb("done"))
        .hasMessage("unknown TaskState 'done' in table tasks");
    assertThatThrownBy(() -> CandidateState.fromDb(null))
        .hasMessage("unknown CandidateState 'null' in table candidates");
  }
}
