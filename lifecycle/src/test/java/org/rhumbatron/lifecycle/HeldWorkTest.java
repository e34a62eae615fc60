package org.rhumbatron.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.rhumbatron.lifecycle.HeldWork.HeldAttempt;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.lifecycle.tasks.TaskState;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;

/** The work Agents hold, read in a transaction: SQLite and PostgreSQL. */
class HeldWorkTest {
  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  private LifecycleRows rows;

  @BeforeEach
  void rows() {
    rows = new LifecycleRows(testDatabase);
    rows.project("p1", "active", null);
    rows.project("p2", "active", null);
    rows.change("c1", "p1", ChangeState.OPEN, 1);
    rows.change("c2", "p1", ChangeState.COMPLETED, 1);
    rows.change("c3", "p2", ChangeState.OPEN, 1);
    rows.task("c1:a", "c1", TaskState.ASSIGNED, "agent-a", 1);
    rows.task("c1:b", "c1", TaskState.RUNNING, "agent-b", 2);
    rows.task("c1:c", "c1", TaskState.READY, null, 0);
    rows.task("c1:d", "c1", TaskState.COMPLETED, "agent-d", 1);
    rows.task("c1:e", "c1", TaskState.ASSIGNED, null, 1);
    rows.task("c2:a", "c2", TaskState.RUNNING, "agent-x", 3);
    rows.task("c3:a", "c3", TaskState.ASSIGNED, "agent-y", 1);
  }

  @AfterEach
  void close() {
    rows.close();
  }

  @DatabaseTest
  void inProjectNamesTheTasksAnAgentHoldsInAnyChangeOfTheProject() {
    List<TaskRef> held = rows.database.read(tx -> HeldWork.inProject(tx, "p1"));

    assertThat(held)
        .containsExactlyInAnyOrder(
            new TaskRef("p1", "c1", "c1:a", "agent-a", 1),
            new TaskRef("p1", "c1", "c1:b", "agent-b", 2),
            new TaskRef("p1", "c2", "c2:a", "agent-x", 3));
  }

  @DatabaseTest
  void inOpenChangesKeepsTheAskedTasksHeldInAnOpenChangeWithTheirStates() {
    List<HeldAttempt> held =
        rows.database.read(
            tx ->
                HeldWork.inOpenChanges(
                    tx, List.of("c1:a", "c1:b", "c1:c", "c1:d", "c2:a", "c3:a", "unknown")));

    assertThat(held)
        .containsExactlyInAnyOrder(
            new HeldAttempt("c1:a", "agent-a", 1, TaskState.ASSIGNED, 1_001),
            new HeldAttempt("c1:b", "agent-b", 2, TaskState.RUNNING, 1_002),
            new HeldAttempt("c3:a", "agent-y", 1, TaskState.ASSIGNED, 1_001));
    List<HeldAttempt> none = rows.database.read(tx -> HeldWork.inOpenChanges(tx, List.of()));
    assertThat(none).isEmpty();
  }

  @DatabaseTest
  void proposedNamesTheChangesetsThatExist() {
    rows.changeset("cs_a_1", "c1:a");
    rows.changeset("cs_b_2", "c1:b");

    Set<String> proposed =
        rows.database.read(tx -> HeldWork.proposed(tx, List.of("cs_a_1", "cs_a_2")));
    Set<String> none = rows.database.read(tx -> HeldWork.proposed(tx, List.of()));

    assertThat(proposed).containsExactly("cs_a_1");
    assertThat(none).isEmpty();
  }
}
