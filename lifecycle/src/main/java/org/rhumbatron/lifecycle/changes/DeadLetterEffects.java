package org.rhumbatron.lifecycle.changes;

import java.sql.SQLException;
import java.util.Optional;
import org.rhumbatron.lifecycle.tasks.TaskLedger;
import org.rhumbatron.platform.db.Tx;

/**
 * What a dead letter does to the rows of a Change and its Tasks, in the transaction of the shard
 * that owns {@code change:<id>}, which the router's dead-letter consumer opens to record its own
 * row beside it.
 */
public final class DeadLetterEffects {
  private DeadLetterEffects() {}

  /**
   * A ready or assigned Task of the Change goes to {@code blocked} with {@code blockedLimit} (why)
   * and {@code error}. Returns the tenant of its Project when it moved; empty when the Change has
   * no such Task or the Task is in another state (e.g. running).
   */
  public static Optional<String> blockTask(
      Tx tx, String changeId, String taskId, String blockedLimit, String error, long now)
      throws SQLException {
    Optional<String> tenant =
        tx.queryFirst(
            "SELECT p.tenant_id FROM tasks t JOIN projects p ON p.project_id = t.project_id"
                + " WHERE t.task_id = ? AND t.change_id = ?",
            rs -> rs.getString(1),
            taskId,
            changeId);
    if (tenant.isEmpty()) {
      return Optional.empty();
    }
    return TaskLedger.block(tx, taskId, blockedLimit, error, now) ? tenant : Optional.empty();
  }

  /** Puts {@code reason} on the Change: a dead letter that blocked none of its Tasks. */
  public static void noteOnChange(Tx tx, String changeId, String reason, long now)
      throws SQLException {
    tx.update(
        "UPDATE changes SET reason = ?, updated_at_ms = ? WHERE change_id = ?",
        reason,
        now,
        changeId);
  }
}
