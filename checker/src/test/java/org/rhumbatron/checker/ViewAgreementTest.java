package org.rhumbatron.checker;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.db.Database;

/** The view's final states against the lifecycle tables: agreement passes, a planted gap fails. */
class ViewAgreementTest {
  @TempDir Path dir;

  private static void item(Database db, String kind, String id, String state) {
    db.inTransaction(
        tx ->
            tx.update(
                "INSERT INTO project_view_items (project_id, kind, item_id, state, change_id,"
                    + " last_event_id, updated_at_ms) VALUES ('p1', ?, ?, ?, 'c1', 'evt', 0)",
                kind,
                id,
                state));
  }

  @Test
  void aViewThatAgreesPassesAndEachPlantedMismatchIsCounted() throws Exception {
    try (Database db = Database.open(dir.resolve("view.db").toString())) {
      db.inTransaction(
          tx -> {
            tx.update(
                "INSERT INTO projects (project_id, tenant_id, name, created_at_ms, updated_at_ms)"
                    + " VALUES ('p1', 't', 'n', 0, 0)");
            tx.update(
                "INSERT INTO changes (change_id, project_id, client_request_id, state,"
                    + " created_at_ms, updated_at_ms, last_activity_at_ms)"
                    + " VALUES ('c1', 'p1', 'r1', 'completed', 0, 0, 0)");
            tx.update(
                "INSERT INTO tasks (task_id, change_id, project_id, state, created_at_ms,"
                    + " updated_at_ms) VALUES ('c1:t1', 'c1', 'p1', 'completed', 0, 0),"
                    + " ('c1:t2', 'c1', 'p1', 'pending', 0, 0)");
            return null;
          });
      item(db, "change", "c1", "completed");
      item(db, "task", "c1:t1", "completed");
      item(db, "agent", "agt-1", "idle");
      // A well-formed Event of a Project no one created (poison) reaches only the view.
      item(db, "task", "chg_unknown:t01", "completed");

      CheckReport agrees = new CheckReport();
      ViewAgreement.check(db, agrees);
      assertThat(agrees.passed()).isTrue();
      assertThat(agrees.count(ViewAgreement.VIEW_DISAGREES)).isZero();
      assertThat(agrees.totals()).containsEntry("view_items_compared", 2L);

      db.inTransaction(
          tx -> {
            tx.update("UPDATE project_view_items SET state = 'ready' WHERE item_id = 'c1:t1'");
            tx.update(
                "INSERT INTO changes (change_id, project_id, client_request_id, state,"
                    + " created_at_ms, updated_at_ms, last_activity_at_ms)"
                    + " VALUES ('c2', 'p1', 'r2', 'failed', 0, 0, 0)");
            return null;
          });
      CheckReport planted = new CheckReport();
      ViewAgreement.check(db, planted);
      assertThat(planted.passed()).isFalse();
      assertThat(planted.ids(ViewAgreement.VIEW_DISAGREES))
          .containsExactly(
              "change c2: not in the view (tables: failed)",
              "task c1:t1: view ready, tables completed");
    }
  }
}
