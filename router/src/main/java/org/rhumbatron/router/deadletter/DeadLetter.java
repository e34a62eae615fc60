package org.rhumbatron.router.deadletter;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;

/**
 * One {@code dead_letters} row, as the operator sees it.
 *
 * @param kind {@code command} or {@code event_batch}
 * @param command the original message text (a Command envelope when it decoded)
 * @param attempt the attempt of the command that was dead-lettered
 * @param retriedAttempt the attempt the last Retry sent, or null
 */
public record DeadLetter(
    long id,
    String commandId,
    String kind,
    String commandType,
    String originQueue,
    String command,
    String reason,
    int deliveryCount,
    String changeId,
    String taskId,
    String projectId,
    String status,
    String resolution,
    String resolvedBy,
    Instant resolvedAt,
    Instant createdAt,
    int attempt,
    String retriedBy,
    Instant retriedAt,
    Integer retriedAttempt) {

  public static final String KIND_COMMAND = "command";
  public static final String KIND_EVENT_BATCH = "event_batch";

  static final String COLUMNS =
      "id, command_id, kind, command_type, origin_queue, command, reason, delivery_count,"
          + " change_id, task_id, project_id, status, resolution, resolved_by, resolved_at_ms,"
          + " created_at_ms, attempt, retried_by, retried_at_ms, retried_attempt";

  public boolean open() {
    return DeadLetterStatus.OPEN.dbName().equals(status);
  }

  static DeadLetter map(ResultSet rs) throws SQLException {
    return new DeadLetter(
        rs.getLong(1),
        rs.getString(2),
        rs.getString(3),
        rs.getString(4),
        rs.getString(5),
        rs.getString(6),
        rs.getString(7),
        rs.getInt(8),
        rs.getString(9),
        rs.getString(10),
        rs.getString(11),
        rs.getString(12),
        rs.getString(13),
        rs.getString(14),
        instant(rs, 15),
        instant(rs, 16),
        rs.getInt(17),
        rs.getString(18),
        instant(rs, 19),
        integer(rs, 20));
  }

  private static Integer integer(ResultSet rs, int column) throws SQLException {
    int value = rs.getInt(column);
    return rs.wasNull() ? null : value;
  }

  private static Instant instant(ResultSet rs, int column) throws SQLException {
    long ms = rs.getLong(column);
    return rs.wasNull() ? null : Instant.ofEpochMilli(ms);
  }
}
