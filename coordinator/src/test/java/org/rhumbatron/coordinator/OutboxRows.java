package org.rhumbatron.coordinator;

import java.util.List;
import org.rhumbatron.platform.db.Database;

/** The outbox table read back for assertions. */
public final class OutboxRows {
  private OutboxRows() {}

  /** One outbox row; {@code streamSeq} and {@code publishedAtMs} are null until published. */
  public record Row(
      long seq,
      String actorClass,
      String actorId,
      String projectId,
      String eventId,
      String state,
      int attempts,
      long nextAttemptAtMs,
      Long streamSeq,
      Long publishedAtMs,
      String lastError) {}

  public static List<Row> all(Database db) {
    return db.read(
        tx ->
            tx.query(
                "SELECT seq, actor_class, actor_id, project_id, event_id, state, attempts,"
                    + " stream_seq, published_at_ms, last_error, next_attempt_at_ms"
                    + " FROM outbox ORDER BY seq",
                rs -> {
                  long streamSeq = rs.getLong(8);
                  Long s = rs.wasNull() ? null : streamSeq;
                  long publishedAt = rs.getLong(9);
                  Long p = rs.wasNull() ? null : publishedAt;
                  return new Row(
                      rs.getLong(1),
                      rs.getString(2),
                      rs.getString(3),
                      rs.getString(4),
                      rs.getString(5),
                      rs.getString(6),
                      rs.getInt(7),
                      rs.getLong(11),
                      s,
                      p,
                      rs.getString(10));
                }));
  }

  public static List<Row> ofProject(Database db, String projectId) {
    return all(db).stream().filter(r -> r.projectId().equals(projectId)).toList();
  }

  /** How many rows are not yet 'published'. */
  public static long unpublished(Database db) {
    return db.read(
        tx ->
            tx.queryFirst(
                    "SELECT COUNT(*) FROM outbox WHERE state <> 'published'", rs -> rs.getLong(1))
                .orElse(0L));
  }
}
