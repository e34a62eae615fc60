package org.rhumbatron.lifecycle;

import java.sql.SQLException;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.lifecycle.tasks.TaskState;
import org.rhumbatron.platform.db.Placeholders;
import org.rhumbatron.platform.db.Tx;

/**
 * The work Agents hold (Tasks assigned or running) and the changesets their attempts proposed, read
 * in the caller's transaction: the causal router decides its wakes on what it claims with.
 */
public final class HeldWork {
  /**
   * {@code state IN ('assigned', 'running')} as literals, not parameters: the partial index {@code
   * ix_tasks_held} serves only a query that names its predicate.
   */
  static final String HELD_STATES =
      TaskState.HELD.stream()
          .map(s -> "'" + s.dbName() + "'")
          .collect(Collectors.joining(", ", "(", ")"));

  private HeldWork() {}

  /** A Task attempt an Agent holds in an open Change, and since when its row last changed. */
  public record HeldAttempt(
      String taskId, String agentId, int attempt, TaskState state, long updatedAtMs) {}

  /** The Tasks an Agent holds in {@code projectId}, whatever the state of their Change. */
  public static List<TaskRef> inProject(Tx tx, String projectId) throws SQLException {
    return tx.query(
        "SELECT project_id, change_id, task_id, agent_id, attempts FROM tasks WHERE project_id = ?"
            + " AND state IN "
            + HELD_STATES
            + " AND agent_id IS NOT NULL",
        rs ->
            new TaskRef(
                rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getInt(5)),
        projectId);
  }

  /** Those of {@code taskIds} an Agent holds in an open Change. */
  public static List<HeldAttempt> inOpenChanges(Tx tx, Collection<String> taskIds)
      throws SQLException {
    if (taskIds.isEmpty()) {
      return List.of();
    }
    Object[] args = new Object[taskIds.size() + 1];
    args[0] = ChangeState.OPEN.dbName();
    System.arraycopy(taskIds.toArray(), 0, args, 1, taskIds.size());
    return tx.query(
        "SELECT t.task_id, t.agent_id, t.attempts, t.state, t.updated_at_ms FROM tasks t"
            + " JOIN changes c ON c.change_id = t.change_id"
            + " WHERE t.state IN "
            + HELD_STATES
            + " AND c.state = ? AND t.task_id IN ("
            + Placeholders.of(taskIds)
            + ")",
        rs ->
            new HeldAttempt(
                rs.getString(1),
                rs.getString(2),
                rs.getInt(3),
                TaskState.fromDb(rs.getString(4)),
                rs.getLong(5)),
        args);
  }

  /**
   * Those of {@code changesetIds} that were proposed (see {@link LifecycleIds#changesetId}: one per
   * Task attempt).
   */
  public static Set<String> proposed(Tx tx, Collection<String> changesetIds) throws SQLException {
    if (changesetIds.isEmpty()) {
      return Set.of();
    }
    return new HashSet<>(
        tx.query(
            "SELECT changeset_id FROM changesets WHERE changeset_id IN ("
                + Placeholders.of(changesetIds)
                + ")",
            rs -> rs.getString(1),
            changesetIds.toArray()));
  }
}
