package org.rhumbatron.lifecycle.changes;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.rhumbatron.lifecycle.LifecycleIds;
import org.rhumbatron.lifecycle.candidates.CandidateState;
import org.rhumbatron.lifecycle.tasks.TaskInfo;
import org.rhumbatron.lifecycle.tasks.TaskReports;
import org.rhumbatron.lifecycle.tasks.TaskState;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;

/**
 * The rows of Changes and Tasks as the lifecycle reads them, and what its writers share: the Events
 * of a Change (stable ids, so a retried step writes nothing new) and the JSON lists of the rows.
 * {@link ChangeDispatcher}, {@link ChangeSettler} and {@link TaskReports} change the rows, each
 * inside a transaction of the shard that owns {@code change:<id>}.
 */
public final class ChangeLedger {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static final String CHANGE =
      "SELECT c.change_id, c.project_id, p.tenant_id, c.client_request_id, c.title, c.state,"
          + " c.reason FROM changes c JOIN projects p ON p.project_id = c.project_id";
  private static final String TASK =
      "SELECT task_id, change_id, project_id, task_key, title, state, depends_on,"
          + " resource_scopes, agent_id, attempts, last_error, end_reason FROM tasks";

  private ChangeLedger() {}

  // Reads ----------------------------------------------------------------------------------------

  public static Optional<ChangeInfo> change(Tx tx, String changeId) throws SQLException {
    return tx.queryFirst(CHANGE + " WHERE c.change_id = ?", ChangeLedger::changeRow, changeId);
  }

  static Optional<ChangeInfo> changeByRequest(Tx tx, String projectId, String clientRequestId)
      throws SQLException {
    return tx.queryFirst(
        CHANGE + " WHERE c.project_id = ? AND c.client_request_id = ?",
        ChangeLedger::changeRow,
        projectId,
        clientRequestId);
  }

  /**
   * A project's Changes, oldest first, in {@code state} (a name as the API gives it) when it is not
   * null.
   */
  public static List<ChangeInfo> changes(Tx tx, String projectId, String state, int limit)
      throws SQLException {
    String where = " WHERE c.project_id = ?" + (state == null ? "" : " AND c.state = ?");
    String order = " ORDER BY c.created_at_ms, c.change_id LIMIT " + limit;
    return state == null
        ? tx.query(CHANGE + where + order, ChangeLedger::changeRow, projectId)
        : tx.query(CHANGE + where + order, ChangeLedger::changeRow, projectId, state);
  }

  public static List<TaskInfo> tasks(Tx tx, String changeId) throws SQLException {
    return tx.query(
        TASK + " WHERE change_id = ? ORDER BY position", ChangeLedger::taskRow, changeId);
  }

  public static Optional<TaskInfo> task(Tx tx, String taskId) throws SQLException {
    return tx.queryFirst(TASK + " WHERE task_id = ?", ChangeLedger::taskRow, taskId);
  }

  private static ChangeInfo changeRow(ResultSet rs) throws SQLException {
    return new ChangeInfo(
        rs.getString(1),
        rs.getString(2),
        rs.getString(3),
        rs.getString(4),
        rs.getString(5),
        ChangeState.fromDb(rs.getString(6)),
        rs.getString(7));
  }

  private static TaskInfo taskRow(ResultSet rs) throws SQLException {
    return new TaskInfo(
        rs.getString(1),
        rs.getString(2),
        rs.getString(3),
        rs.getString(4),
        rs.getString(5),
        TaskState.fromDb(rs.getString(6)),
        fromJson(rs.getString(7)),
        fromJson(rs.getString(8)),
        rs.getString(9),
        rs.getInt(10),
        rs.getString(11),
        rs.getString(12));
  }

  public static void touch(Tx tx, String changeId, long now) throws SQLException {
    tx.update(
        "UPDATE changes SET last_activity_at_ms = ?, updated_at_ms = ? WHERE change_id = ?",
        now,
        now,
        changeId);
  }

  /** A Change or Task Event with its stable id ({@code key}: e.g. the Task attempt's). */
  public static Event event(
      Clock clock,
      ChangeInfo change,
      String taskId,
      EventType type,
      String key,
      String writer,
      String causedBy,
      ObjectNode payload) {
    return Event.builder()
        .eventId(StableIds.stableEventId(change.changeId(), type, taskId, key))
        .eventType(type)
        .tenantId(change.tenantId())
        .projectId(change.projectId())
        .changeId(change.changeId())
        .taskId(taskId)
        .actor(writer)
        .causedBy(causedBy)
        .correlationId(change.changeId())
        .timestamp(clock.instant())
        .payload(payload)
        .build();
  }

  public static String key(int attempt) {
    return LifecycleIds.attemptKey(attempt);
  }

  /** The Candidates of the Change that verification rejected. */
  static long rejections(Tx tx, String changeId) throws SQLException {
    return tx.queryLong(
        "SELECT COUNT(*) FROM candidates WHERE change_id = ? AND state = ?",
        changeId,
        CandidateState.REJECTED.dbName());
  }

  public static ObjectNode payload() {
    return JsonNodeFactory.instance.objectNode();
  }

  public static String toJson(List<String> values) {
    try {
      return JSON.writeValueAsString(values);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a list of strings always encodes", e);
    }
  }

  /**
   * A stored JSON array of strings; read with the streaming parser, as every dispatch reads the
   * lists of all its Change's Tasks.
   */
  public static List<String> fromJson(String json) {
    if (json == null || json.equals("[]")) {
      return List.of();
    }
    try (JsonParser p = JSON.getFactory().createParser(json)) {
      if (p.nextToken() != JsonToken.START_ARRAY) {
        throw notStrings(json, null);
      }
      List<String> values = new ArrayList<>();
      for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
        if (t != JsonToken.VALUE_STRING) {
          throw notStrings(json, null);
        }
        values.add(p.getText());
      }
      if (p.nextToken() != null) {
        throw notStrings(json, null);
      }
      return List.copyOf(values);
    } catch (IOException e) {
      throw notStrings(json, e);
    }
  }

  private static IllegalStateException notStrings(String json, Exception cause) {
    return new IllegalStateException("not a JSON array of strings: " + json, cause);
  }
}
