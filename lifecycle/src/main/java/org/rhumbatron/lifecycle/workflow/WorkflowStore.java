package org.rhumbatron.lifecycle.workflow;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.SQLException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.rhumbatron.platform.db.Database;

/**
 * The rows of Workflow instances and their steps done ({@code V7__workflows.sql}). Each method is
 * one transaction; the inserts are {@code ON CONFLICT DO NOTHING}, so racing starts make one
 * instance and a step stored twice keeps its first result.
 */
final class WorkflowStore {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String RUNNING = WorkflowState.RUNNING.dbName();

  /** An instance's type and state, for deciding whether to run it. */
  record Head(String instanceId, String type, WorkflowState state) {}

  private final Database database;

  WorkflowStore(Database database) {
    this.database = database;
  }

  /** Inserts a running instance; false when one with this id exists (whatever its type). */
  boolean insert(String instanceId, String type, ObjectNode input, long nowMs) {
    String json = toJson(input);
    return database.inTransaction(
            tx ->
                tx.update(
                    "INSERT INTO workflow_instances (instance_id, workflow_type, state, input,"
                        + " created_at_ms, updated_at_ms) VALUES (?, ?, ?, ?, ?, ?)"
                        + " ON CONFLICT DO NOTHING",
                    instanceId,
                    type,
                    RUNNING,
                    json,
                    nowMs,
                    nowMs))
        == 1;
  }

  Optional<Head> head(String instanceId) {
    return database.read(
        tx ->
            tx.queryFirst(
                "SELECT instance_id, workflow_type, state FROM workflow_instances"
                    + " WHERE instance_id = ?",
                rs ->
                    new Head(
                        rs.getString(1), rs.getString(2), WorkflowState.fromDb(rs.getString(3))),
                instanceId));
  }

  /** Every running instance, oldest first. */
  List<Head> running() {
    return database.read(
        tx ->
            tx.query(
                "SELECT instance_id, workflow_type FROM workflow_instances WHERE state = ?"
                    + " ORDER BY created_at_ms, instance_id",
                rs -> new Head(rs.getString(1), rs.getString(2), WorkflowState.RUNNING),
                RUNNING));
  }

  Optional<WorkflowInstance> instance(String instanceId) {
    return database.read(
        tx -> {
          Optional<InstanceRow> row =
              tx.queryFirst(
                  "SELECT workflow_type, state, input, last_error FROM workflow_instances"
                      + " WHERE instance_id = ?",
                  rs ->
                      new InstanceRow(
                          rs.getString(1),
                          WorkflowState.fromDb(rs.getString(2)),
                          rs.getString(3),
                          rs.getString(4)),
                  instanceId);
          if (row.isEmpty()) {
            return Optional.empty();
          }
          Map<String, JsonNode> results = new LinkedHashMap<>();
          for (StepRow step :
              tx.query(
                  "SELECT step_name, result FROM workflow_steps WHERE instance_id = ?"
                      + " ORDER BY position",
                  rs -> new StepRow(rs.getString(1), rs.getString(2)),
                  instanceId)) {
            results.put(step.name(), parse(step.result()));
          }
          InstanceRow r = row.get();
          JsonNode input = parse(r.input());
          if (!(input instanceof ObjectNode object)) {
            throw new SQLException("workflow " + instanceId + ": input is not a JSON object");
          }
          return Optional.of(
              new WorkflowInstance(
                  instanceId,
                  r.type(),
                  r.state(),
                  object,
                  r.lastError(),
                  Collections.unmodifiableMap(results)));
        });
  }

  private record InstanceRow(String type, WorkflowState state, String input, String lastError) {}

  private record StepRow(String name, String result) {}

  /** Keeps a step's result; a result already stored (another run's) stays. */
  void storeResult(String instanceId, String step, int position, JsonNode result, long nowMs) {
    String json = toJson(result == null ? NullNode.getInstance() : result);
    database.inTransaction(
        tx ->
            tx.update(
                "INSERT INTO workflow_steps (instance_id, step_name, position, result,"
                    + " completed_at_ms) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                instanceId,
                step,
                position,
                json,
                nowMs));
  }

  /** Records a failed try of a running instance's step. */
  void noteError(String instanceId, String error, long nowMs) {
    setState(instanceId, WorkflowState.RUNNING, error, nowMs);
  }

  /** running → completed; false when it was not running. */
  boolean complete(String instanceId, long nowMs) {
    return setState(instanceId, WorkflowState.COMPLETED, null, nowMs);
  }

  /** running → failed with {@code error}; false when it was not running. */
  boolean fail(String instanceId, String error, long nowMs) {
    return setState(instanceId, WorkflowState.FAILED, error, nowMs);
  }

  /** failed → running again (its done steps stay done); false when it was not failed. */
  boolean reopen(String instanceId, long nowMs) {
    return database.inTransaction(
            tx ->
                tx.update(
                    "UPDATE workflow_instances SET state = ?, updated_at_ms = ?"
                        + " WHERE instance_id = ? AND state = ?",
                    RUNNING,
                    nowMs,
                    instanceId,
                    WorkflowState.FAILED.dbName()))
        == 1;
  }

  /** Sets a running instance's state, and its last error unless {@code error} is null. */
  private boolean setState(String instanceId, WorkflowState state, String error, long nowMs) {
    return database.inTransaction(
            tx ->
                tx.update(
                    "UPDATE workflow_instances SET state = ?,"
                        + " last_error = COALESCE(?, last_error), updated_at_ms = ?"
                        + " WHERE instance_id = ? AND state = ?",
                    state.dbName(),
                    error,
                    nowMs,
                    instanceId,
                    RUNNING))
        == 1;
  }

  private static String toJson(JsonNode node) {
    try {
      return JSON.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("cannot write as JSON: " + e.getOriginalMessage(), e);
    }
  }

  private static JsonNode parse(String json) throws SQLException {
    try {
      return JSON.readTree(json);
    } catch (JsonProcessingException e) {
      throw new SQLException("not JSON in a workflow row: " + e.getOriginalMessage(), e);
    }
  }
}
