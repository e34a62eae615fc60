package org.rhumbatron.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.rhumbatron.lifecycle.MaintenanceDue.DueChange;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.tasks.TaskState;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;

/** What the maintenance ticks act on: SQLite and PostgreSQL. */
class MaintenanceDueTest {
  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  private LifecycleRows rows;
  private MaintenanceDue due;

  @BeforeEach
  void rows() {
    rows = new LifecycleRows(testDatabase);
    rows.project("p1", "active", null);
    rows.project("p2", "active", null);
    due = new MaintenanceDue(rows.database);
  }

  @AfterEach
  void close() {
    rows.close();
  }

  @DatabaseTest
  void releasingSinceListsReleasingChangesPromotedByThenOldestPromotionFirst() {
    rows.change("r3", "p1", ChangeState.RELEASING, 1, 300L);
    rows.change("r1", "p2", ChangeState.RELEASING, 1, 100L);
    rows.change("r2", "p1", ChangeState.RELEASING, 1, 200L);
    rows.change("a1", "p1", ChangeState.AWAITING_APPROVAL, 1, 50L);
    rows.change("d1", "p1", ChangeState.COMPLETED, 1, 50L);

    assertThat(due.releasingSince(200, 10))
        .containsExactly(new DueChange("r1", "p2"), new DueChange("r2", "p1"));
    assertThat(due.releasingSince(200, 1)).containsExactly(new DueChange("r1", "p2"));
  }

  @DatabaseTest
  void quietAndUnheldListsOpenOrVerifyingChangesQuietInTheWindowThatNoAgentMoves() {
    rows.change("open", "p1", ChangeState.OPEN, 1_000);
    rows.change("verifying", "p2", ChangeState.VERIFYING, 2_000);
    rows.change("readyTask", "p1", ChangeState.OPEN, 1_100);
    rows.task("readyTask:a", "readyTask", TaskState.READY, null, 0);
    rows.change("running", "p1", ChangeState.OPEN, 1_200);
    rows.task("running:a", "running", TaskState.RUNNING, "agent-1", 1);
    rows.change("assigned", "p1", ChangeState.OPEN, 1_300);
    rows.task("assigned:a", "assigned", TaskState.ASSIGNED, "agent-2", 1);
    rows.change("approval", "p1", ChangeState.AWAITING_APPROVAL, 1_400);
    rows.change("tooOld", "p1", ChangeState.OPEN, 799);
    rows.change("tooRecent", "p1", ChangeState.OPEN, 2_501);

    assertThat(due.quietAndUnheld(2_500, 800, 10))
        .containsExactly(
            new DueChange("open", "p1"),
            new DueChange("readyTask", "p1"),
            new DueChange("verifying", "p2"));
    assertThat(due.quietAndUnheld(2_500, 800, 2)).hasSize(2);
  }

  @DatabaseTest
  void archivedProjectsListsArchivedProjectsInTheOrderTheyWereArchived() {
    rows.project("late", "archived", 300L);
    rows.project("early", "archived", 100L);
    rows.project("gone", "deleted", null);

    assertThat(due.archivedProjects(10)).containsExactly("early", "late");
    assertThat(due.archivedProjects(1)).containsExactly("early");
  }

  @DatabaseTest
  void endedAmongKeepsTheChangesThatEnded() {
    List<String> ids = new ArrayList<>();
    for (ChangeState s : ChangeState.values()) {
      rows.change(s.dbName(), "p1", s, 1);
      ids.add(s.dbName());
    }
    ids.add("unknown");

    Set<String> ended = rows.database.read(tx -> MaintenanceDue.endedAmong(tx, ids));
    Set<String> none = rows.database.read(tx -> MaintenanceDue.endedAmong(tx, List.of()));

    assertThat(ended)
        .containsExactlyInAnyOrder("completed", "failed", "cancelled", "not_selected", "declined");
    assertThat(none).isEmpty();
  }
}
