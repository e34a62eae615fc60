package org.rhumbatron.lifecycle;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.rhumbatron.lifecycle.workflow.WorkflowState;
import org.rhumbatron.platform.db.BatchedPurge;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Placeholders;
import org.rhumbatron.platform.db.TxWork;

/**
 * The horizons of the lifecycle's tables that grow with the work and not with the Projects: the
 * Clef-flash decisions ({@code model_routes}) and ended Workflow instances with their steps. The
 * router's maintenance runs them beside its own purges; the rows are written and deleted here only.
 */
public final class LifecycleRetention {
  private static final List<String> ENDED_STATES =
      List.of(WorkflowState.COMPLETED.dbName(), WorkflowState.FAILED.dbName());
  private static final String ENDED = "state IN (?, ?)";

  private LifecycleRetention() {}

  /**
   * Deletes the Clef-flash decisions made before {@code before}, at most {@code batch} per
   * transaction. A decision is read again only while its Event can be routed again, which its claim
   * (kept {@code processed-events.keep}) already rules out once it is gone.
   */
  public static BatchedPurge.Result modelRoutes(
      Database database, TxWork<?> guard, Instant before, int batch) {
    return BatchedPurge.run(
        database,
        guard,
        "model_routes",
        "decided_at_ms < ?",
        "decided_at_ms",
        batch,
        before.toEpochMilli());
  }

  /**
   * Deletes the Workflow instances that ended (completed or failed) before {@code before}, with
   * their steps, at most {@code batch} instances per transaction. A running instance and its steps
   * stay however old; a failed one reopened meanwhile is locked out of the batch (PostgreSQL) or
   * cannot interleave with it (SQLite's one writer).
   */
  public static BatchedPurge.Result endedWorkflows(
      Database database, TxWork<?> guard, Instant before, int batch) {
    if (batch < 1) {
      throw new IllegalArgumentException("a purge batch holds 1 row or more, was " + batch);
    }
    String select =
        "SELECT instance_id FROM workflow_instances WHERE "
            + ENDED
            + " AND updated_at_ms < ? ORDER BY updated_at_ms LIMIT "
            + batch
            + ("postgres".equals(database.dialect().name()) ? " FOR UPDATE" : "");
    return BatchedPurge.repeat(
        database,
        "workflow_instances",
        batch,
        tx -> {
          guard.run(tx);
          List<String> ids =
              tx.query(
                  select,
                  rs -> rs.getString(1),
                  ENDED_STATES.get(0),
                  ENDED_STATES.get(1),
                  before.toEpochMilli());
          if (ids.isEmpty()) {
            return 0;
          }
          String in = Placeholders.of(ids);
          tx.update("DELETE FROM workflow_steps WHERE instance_id IN (" + in + ")", ids.toArray());
          List<Object> args = new ArrayList<>(ids);
          args.addAll(ENDED_STATES);
          return tx.update(
              "DELETE FROM workflow_instances WHERE instance_id IN (" + in + ") AND " + ENDED,
              args.toArray());
        });
  }
}
