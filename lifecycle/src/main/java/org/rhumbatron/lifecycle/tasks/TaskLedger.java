package org.rhumbatron.lifecycle.tasks;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.rhumbatron.lifecycle.LifecycleIds;
import org.rhumbatron.lifecycle.StoredStates;
import org.rhumbatron.lifecycle.changes.ChangeLedger;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.platform.db.Placeholders;
import org.rhumbatron.platform.db.Tx;

/**
 * The one writer of {@code tasks}: a Task is inserted pending, and every later state is a move that
 * {@link TaskState} allows from the state the caller read in the same transaction; any other throws
 * {@link IllegalTaskTransitionException} before it is written. The caller's transaction is that of
 * the shard that owns the Task's Change, so the state it read is the row's.
 */
public final class TaskLedger {
  private TaskLedger() {}

  /** The Tasks of a new Change's work graph, all pending, in the graph's order. */
  public static void insertPending(
      Tx tx, String changeId, String projectId, WorkGraph graph, long now) throws SQLException {
    List<Object[]> rows = new ArrayList<>();
    int position = 0;
    for (WorkGraph.TaskSpec t : graph.tasks()) {
      rows.add(
          new Object[] {
            LifecycleIds.taskId(changeId, t.key()),
            changeId,
            projectId,
            t.key(),
            position++,
            t.title(),
            TaskState.PENDING.dbName(),
            ChangeLedger.toJson(
                t.dependsOn().stream().map(d -> LifecycleIds.taskId(changeId, d)).toList()),
            ChangeLedger.toJson(t.resourceScopes()),
            now,
            now
          });
    }
    tx.updateBatch(
        "INSERT INTO tasks (task_id, change_id, project_id, task_key, position, title, state,"
            + " depends_on, resource_scopes, attempts, created_at_ms, updated_at_ms)"
            + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)",
        rows);
  }

  /** → ready for {@code attempt}, without an Agent or a blocked limit. */
  public static void ready(Tx tx, TaskInfo t, int attempt, long now) throws SQLException {
    check(t, TaskState.READY);
    tx.update(
        "UPDATE tasks SET state = ?, attempts = ?, agent_id = NULL, blocked_limit = NULL,"
            + " ready_at_ms = ?, updated_at_ms = ? WHERE task_id = ?",
        TaskState.READY.dbName(),
        attempt,
        now,
        now,
        t.taskId());
  }

  /** ready → assigned to {@code agentId}; false when the row was no longer ready. */
  public static boolean assign(Tx tx, TaskInfo t, String agentId, long now) throws SQLException {
    check(t, TaskState.ASSIGNED);
    return tx.update(
            "UPDATE tasks SET state = ?, agent_id = ?, updated_at_ms = ?"
                + " WHERE task_id = ? AND state = ?",
            TaskState.ASSIGNED.dbName(),
            agentId,
            now,
            t.taskId(),
            TaskState.READY.dbName())
        == 1;
  }

  /** assigned → running. */
  public static void start(Tx tx, TaskInfo t, long now) throws SQLException {
    check(t, TaskState.RUNNING);
    tx.update(
        "UPDATE tasks SET state = ?, updated_at_ms = ? WHERE task_id = ?",
        TaskState.RUNNING.dbName(),
        now,
        t.taskId());
  }

  /** The Agent's end of its attempt: completed, or failed with {@code error}. */
  public static void finish(Tx tx, TaskInfo t, TaskState end, String error, long now)
      throws SQLException {
    check(t, end);
    tx.update(
        "UPDATE tasks SET state = ?, last_error = ?, ended_at_ms = ?, updated_at_ms = ?"
            + " WHERE task_id = ?",
        end.dbName(),
        error,
        now,
        now,
        t.taskId());
  }

  /** → cancelled because its Change ended ({@code endReason}). */
  public static void cancel(Tx tx, TaskInfo t, String endReason, long now) throws SQLException {
    check(t, TaskState.CANCELLED);
    tx.update(
        "UPDATE tasks SET state = ?, end_reason = ?, ended_at_ms = ?,"
            + " updated_at_ms = ? WHERE task_id = ?",
        TaskState.CANCELLED.dbName(),
        endReason,
        now,
        now,
        t.taskId());
  }

  /** Every Task of the Change pending again, without an Agent: its work graph runs again. */
  public static void reopen(Tx tx, String changeId, long now) throws SQLException {
    for (TaskInfo t : ChangeLedger.tasks(tx, changeId)) {
      check(t, TaskState.PENDING);
    }
    tx.update(
        "UPDATE tasks SET state = ?, agent_id = NULL, updated_at_ms = ? WHERE change_id = ?",
        TaskState.PENDING.dbName(),
        now,
        changeId);
  }

  /**
   * → blocked with {@code blockedLimit} (why) and {@code error}, from any state that may block;
   * false when the Task was in another state (e.g. running) and stays there.
   */
  public static boolean block(Tx tx, String taskId, String blockedLimit, String error, long now)
      throws SQLException {
    List<String> from =
        StoredStates.dbNames(TaskState.movingTo(TaskState.BLOCKED).stream().sorted().toList());
    List<Object> args =
        new ArrayList<>(
            Arrays.asList(TaskState.BLOCKED.dbName(), blockedLimit, error, now, taskId));
    args.addAll(from);
    return tx.update(
            "UPDATE tasks SET state = ?, blocked_limit = ?, last_error = ?, updated_at_ms = ?"
                + " WHERE task_id = ? AND state IN ("
                + Placeholders.of(from)
                + ")",
            args.toArray())
        == 1;
  }

  private static void check(TaskInfo t, TaskState to) {
    if (!t.taskState().canMoveTo(to)) {
      throw new IllegalTaskTransitionException(t.taskId(), t.taskState(), to);
    }
  }
}
