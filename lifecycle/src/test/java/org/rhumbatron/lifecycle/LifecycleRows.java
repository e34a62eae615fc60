package org.rhumbatron.lifecycle;

import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.tasks.TaskState;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.testkit.db.TestDatabase;

/**
 * Lifecycle rows written directly, for the tests of the read classes: each row as a test names it.
 */
final class LifecycleRows implements AutoCloseable {
  final Database database;

  LifecycleRows(TestDatabase db) {
    database = Database.open(db.url());
  }

  void project(String projectId, String status, Long archivedAtMs) {
    database.inTransaction(
        tx ->
            tx.update(
                "INSERT INTO projects (project_id, tenant_id, name, status, created_at_ms,"
                    + " updated_at_ms, archived_at_ms) VALUES (?, 't1', ?, ?, 1, 1, ?)",
                projectId,
                projectId,
                status,
                archivedAtMs));
  }

  void change(String changeId, String projectId, ChangeState state, long lastActivityAtMs) {
    change(changeId, projectId, state, lastActivityAtMs, null);
  }

  void change(
      String changeId,
      String projectId,
      ChangeState state,
      long lastActivityAtMs,
      Long promotedAtMs) {
    database.inTransaction(
        tx ->
            tx.update(
                "INSERT INTO changes (change_id, project_id, client_request_id, state,"
                    + " created_at_ms, updated_at_ms, last_activity_at_ms, promoted_at_ms)"
                    + " VALUES (?, ?, ?, ?, 1, 1, ?, ?)",
                changeId,
                projectId,
                changeId,
                state.dbName(),
                lastActivityAtMs,
                promotedAtMs));
  }

  void task(String taskId, String changeId, TaskState state, String agentId, int attempts) {
    database.inTransaction(
        tx ->
            tx.update(
                "INSERT INTO tasks (task_id, change_id, project_id, state, agent_id, attempts,"
                    + " created_at_ms, updated_at_ms)"
                    + " SELECT ?, change_id, project_id, ?, ?, ?, 1, ? FROM changes"
                    + " WHERE change_id = ?",
                taskId,
                state.dbName(),
                agentId,
                attempts,
                1_000L + attempts,
                changeId));
  }

  void changeset(String changesetId, String taskId) {
    database.inTransaction(
        tx ->
            tx.update(
                "INSERT INTO changesets (changeset_id, change_id, task_id, project_id, agent_id,"
                    + " created_at_ms) SELECT ?, change_id, task_id, project_id, 'agent-1', 1"
                    + " FROM tasks WHERE task_id = ?",
                changesetId,
                taskId));
  }

  @Override
  public void close() {
    database.close();
  }
}
