package org.rhumbatron.api;

import io.javalin.Javalin;
import io.javalin.http.Context;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.rhumbatron.coordinator.view.ProjectView;
import org.rhumbatron.lifecycle.projects.ProjectInfo;
import org.rhumbatron.platform.db.Database;

/**
 * A project's read model (the projector's {@link ProjectView}) and its event feed ({@code
 * project_events}) in pages. A cursor is opaque to clients: the feed sequence of the last row
 * given, base64url-encoded; {@code next} is the cursor to ask with next time (the same one when the
 * page was empty, so a client can poll with it).
 */
final class FeedRoutes {
  private static final String CURSOR_PREFIX = "feed:";

  private final Database database;
  private final ProjectRoutes projects;

  FeedRoutes(Database database, ProjectRoutes projects) {
    this.database = database;
    this.projects = projects;
  }

  void mount(Javalin app) {
    app.get("/api/projects/{projectId}/view", this::view);
    app.get("/api/projects/{projectId}/events", this::events);
  }

  private void view(Context ctx) {
    ProjectInfo project = projects.find(ctx);
    ProjectView view =
        ProjectView.read(database, project.projectId())
            .orElse(
                new ProjectView(
                    project.projectId(), 0, null, null, null, null, Map.of(), List.of()));
    Json.answer(
        ctx,
        200,
        Json.object(
            "projectId", view.projectId(),
            "eventsApplied", view.eventsApplied(),
            "canonicalGeneration", view.canonicalGeneration(),
            "lastEventId", view.lastEventId(),
            "lastEventType", view.lastEventType(),
            "lastEventAt", Json.timeMs(view.lastEventAtMs()),
            "counts", view.counts(),
            "items", view.items()));
  }

  private void events(Context ctx) {
    ProjectInfo project = projects.find(ctx);
    String after = Query.optional(ctx, "after");
    long afterSeq = after == null ? 0 : decode(after);
    int limit = Query.limit(ctx, 100, 1000);
    List<Map<String, Object>> rows =
        database.read(
            tx ->
                tx.query(
                    "SELECT feed_seq, event_id, event_type, change_id, task_id, stream_index,"
                        + " stream_seq, occurred_at_ms, recorded_at_ms, event FROM project_events"
                        + " WHERE project_id = ? AND feed_seq > ? ORDER BY feed_seq LIMIT "
                        + limit,
                    rs -> {
                      long streamSeq = rs.getLong(7);
                      Long streamSequence = rs.wasNull() ? null : streamSeq;
                      return Json.object(
                          "cursor", encode(rs.getLong(1)),
                          "eventId", rs.getString(2),
                          "eventType", rs.getString(3),
                          "changeId", rs.getString(4),
                          "taskId", rs.getString(5),
                          "stream", rs.getInt(6),
                          "streamSequence", streamSequence,
                          "occurredAt", Json.timeMs(rs.getLong(8)),
                          "recordedAt", Json.timeMs(rs.getLong(9)),
                          "event", Json.embedded(rs.getString(10)));
                    },
                    project.projectId(),
                    afterSeq));
    String next = rows.isEmpty() ? after : (String) rows.get(rows.size() - 1).get("cursor");
    Json.answer(
        ctx, 200, Json.object("projectId", project.projectId(), "events", rows, "next", next));
  }

  static String encode(long feedSeq) {
    return Base64.getUrlEncoder()
        .withoutPadding()
        .encodeToString((CURSOR_PREFIX + feedSeq).getBytes(StandardCharsets.UTF_8));
  }

  static long decode(String cursor) {
    try {
      String raw = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
      if (raw.startsWith(CURSOR_PREFIX)) {
        long seq = Long.parseLong(raw.substring(CURSOR_PREFIX.length()));
        if (seq >= 0) {
          return seq;
        }
      }
    } catch (IllegalArgumentException e) {
      // answered below
    }
    throw ApiException.badRequest("after", "not a cursor this API gave (use a 'next' or 'cursor')");
  }
}
