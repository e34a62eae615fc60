package org.rhumbatron.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;

/**
 * A run's lifecycle rows, written as stored, read back typed and counted across Projects; SQLite
 * and PostgreSQL.
 */
class RunReadsTest {
  TestDatabase testDatabase; // one per run: @DatabaseTest sets it
  private Database db;
  private RunReads reads;

  @BeforeEach
  void rows() {
    db = Database.open(testDatabase.url());
    reads = new RunReads(db);
    db.inTransaction(
        tx -> {
          for (String p : List.of("p1", "p2", "p3")) {
            tx.update(
                "INSERT INTO projects (project_id, tenant_id, name, created_at_ms, updated_at_ms)"
                    + " VALUES (?, 't', 'n', 0, 0)",
                p);
          }
          tx.update(
              "INSERT INTO changes (change_id, project_id, client_request_id, state,"
                  + " created_at_ms, updated_at_ms, last_activity_at_ms, ended_at_ms) VALUES"
                  + " ('c1', 'p1', 'r1', 'completed', 10, 0, 0, 50),"
                  + " ('c2', 'p1', 'r2', 'awaiting_approval', 30, 0, 0, NULL),"
                  + " ('c3', 'p2', 'r3', 'awaiting_approval', 20, 0, 0, NULL),"
                  + " ('c4', 'p2', 'r4', 'failed', 40, 0, 0, 60),"
                  + " ('c5', 'p3', 'r5', 'completed', 5, 0, 0, 7),"
                  + " ('c6', 'p3', 'r6', 'open', 8, 0, 0, NULL)");
          tx.update(
              "INSERT INTO tasks (task_id, change_id, project_id, state, depends_on,"
                  + " created_at_ms, updated_at_ms, ended_at_ms) VALUES"
                  + " ('c1:t1', 'c1', 'p1', 'completed', '[]', 0, 0, 20),"
                  + " ('c1:t2', 'c1', 'p1', 'completed', '[\"c1:t1\"]', 0, 0, 40),"
                  + " ('c5:t1', 'c5', 'p3', 'completed', '[]', 0, 0, 6)");
          tx.update(
              "INSERT INTO candidates (candidate_id, change_id, project_id, base_generation,"
                  + " composition_key, state, created_at_ms, updated_at_ms) VALUES"
                  + " ('k1', 'c1', 'p1', 1, 'x', 'stale', 0, 0),"
                  + " ('k2', 'c1', 'p1', 2, 'y', 'promoted', 0, 0),"
                  + " ('k3', 'c4', 'p2', 1, 'z', 'stale', 0, 0),"
                  + " ('k4', 'c5', 'p3', 1, 'w', 'stale', 0, 0)");
          return null;
        });
  }

  @AfterEach
  void close() {
    db.close();
  }

  @DatabaseTest
  void changesAreCountedByStateInTheOrderOfTheirStoredNames() {
    assertThat(reads.changesByState())
        .containsExactly(
            Map.entry(ChangeState.AWAITING_APPROVAL, 2L),
            Map.entry(ChangeState.COMPLETED, 2L),
            Map.entry(ChangeState.FAILED, 1L),
            Map.entry(ChangeState.OPEN, 1L));
    assertThat(reads.changeCount(ChangeState.COMPLETED)).isEqualTo(2);
    assertThat(reads.changeCount(ChangeState.OPEN)).isEqualTo(1);
    assertThat(reads.changeCount(ChangeState.DECLINED)).isZero();
    assertThat(reads.changesEnded()).isEqualTo(3);
  }

  @DatabaseTest
  void theChangesInAStateComeOldestFirst() {
    assertThat(reads.changeIds(ChangeState.AWAITING_APPROVAL)).containsExactly("c3", "c2");
    assertThat(reads.changeIds(ChangeState.DECLINED)).isEmpty();
  }

  @DatabaseTest
  void aRoundsRowsAreThoseOfItsProjects() {
    List<String> round = List.of("p1", "p2");

    assertThat(reads.staleCandidates(round)).isEqualTo(2);
    assertThat(reads.taskEnds(round))
        .containsExactlyInAnyOrder(
            new RunReads.TaskEnd("c1:t1", List.of(), 20),
            new RunReads.TaskEnd("c1:t2", List.of("c1:t1"), 40));
    assertThat(reads.changeTimes(round))
        .containsExactlyInAnyOrder(
            new RunReads.ChangeTimes("c1", ChangeState.COMPLETED, 10, 50),
            new RunReads.ChangeTimes("c2", ChangeState.AWAITING_APPROVAL, 30, 0),
            new RunReads.ChangeTimes("c3", ChangeState.AWAITING_APPROVAL, 20, 0),
            new RunReads.ChangeTimes("c4", ChangeState.FAILED, 40, 60));
  }
}
