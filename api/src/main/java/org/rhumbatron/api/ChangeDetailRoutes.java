package org.rhumbatron.api;

import io.javalin.Javalin;
import io.javalin.http.Context;
import java.util.List;
import java.util.Map;
import org.rhumbatron.lifecycle.LifecycleOverview;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.platform.db.Database;

/**
 * What the dashboard's Change page shows besides the Change and its Tasks: its Events in the order
 * the feed recorded them ({@code project_events}), and its Candidates with their verdicts.
 */
final class ChangeDetailRoutes {
  private static final int MAX_EVENTS = 1000;

  private final ChangeRoutes changes;
  private final LifecycleOverview overview;
  private final Database database;

  ChangeDetailRoutes(ChangeRoutes changes, LifecycleOverview overview, Database database) {
    this.changes = changes;
    this.overview = overview;
    this.database = database;
  }

  void mount(Javalin app) {
    app.get("/api/changes/{changeId}/events", this::events);
    app.get("/api/changes/{changeId}/candidates", this::candidates);
  }

  private void events(Context ctx) {
    ChangeInfo change = changes.find(ctx);
    int limit = Query.limit(ctx, MAX_EVENTS, MAX_EVENTS);
    // The project's index leads: a Change's Events are a slice of its project's feed.
    List<Map<String, Object>> rows =
        database.read(
            tx ->
                tx.query(
                    "SELECT event_id, event_type, task_id, occurred_at_ms, recorded_at_ms, event"
                        + " FROM project_events WHERE project_id = ? AND change_id = ?"
                        + " ORDER BY feed_seq LIMIT "
                        + limit,
                    rs ->
                        Json.object(
                            "eventId", rs.getString(1),
                            "eventType", rs.getString(2),
                            "taskId", rs.getString(3),
                            "occurredAt", Json.timeMs(rs.getLong(4)),
                            "recordedAt", Json.timeMs(rs.getLong(5)),
                            "causedBy", causedBy(rs.getString(6))),
                    change.projectId(),
                    change.changeId()));
    Json.answer(ctx, 200, Json.object("changeId", change.changeId(), "events", rows));
  }

  private void candidates(Context ctx) {
    ChangeInfo change = changes.find(ctx);
    List<Object> rows =
        overview.candidates(change.changeId()).stream()
            .map(c -> (Object) Views.candidate(c))
            .toList();
    Json.answer(ctx, 200, Json.object("changeId", change.changeId(), "candidates", rows));
  }

  private static String causedBy(String event) {
    Object tree = Json.embedded(event);
    if (tree instanceof com.fasterxml.jackson.databind.JsonNode node) {
      String cause = node.path("causedBy").asText(null);
      return cause == null || cause.isEmpty() ? null : cause;
    }
    return null;
  }
}
