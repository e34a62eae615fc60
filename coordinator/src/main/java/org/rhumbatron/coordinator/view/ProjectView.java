package org.rhumbatron.coordinator.view;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.rhumbatron.platform.db.Database;

/**
 * The read model of one project as the API and dashboard show it: how many Changes, Tasks,
 * Candidates and Agents are in each state, each item's state, and the last event applied.
 *
 * @param counts kind to state to count, e.g. {@code task -> running -> 3}
 */
public record ProjectView(
    String projectId,
    long eventsApplied,
    Long canonicalGeneration,
    String lastEventId,
    String lastEventType,
    Long lastEventAtMs,
    Map<String, Map<String, Long>> counts,
    List<Item> items) {

  /** One Change, Task, Candidate or Agent and its latest state. */
  public record Item(String kind, String itemId, String state, String changeId) {}

  /** The view of {@code projectId}, or empty when no event of it was applied yet. */
  public static Optional<ProjectView> read(Database database, String projectId) {
    return database.read(
        tx -> {
          Optional<ProjectView> head =
              tx.queryFirst(
                  "SELECT events_applied, canonical_generation, last_event_id, last_event_type,"
                      + " last_event_at_ms FROM project_views WHERE project_id = ?",
                  rs ->
                      new ProjectView(
                          projectId,
                          rs.getLong(1),
                          nullableLong(rs, 2),
                          rs.getString(3),
                          rs.getString(4),
                          nullableLong(rs, 5),
                          Map.of(),
                          List.of()),
                  projectId);
          if (head.isEmpty()) {
            return Optional.empty();
          }
          List<Item> items =
              tx.query(
                  "SELECT kind, item_id, state, change_id FROM project_view_items"
                      + " WHERE project_id = ? ORDER BY kind, item_id",
                  rs ->
                      new Item(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4)),
                  projectId);
          Map<String, Map<String, Long>> counts = new TreeMap<>();
          for (Item i : items) {
            counts.computeIfAbsent(i.kind(), k -> new TreeMap<>()).merge(i.state(), 1L, Long::sum);
          }
          ProjectView h = head.get();
          return Optional.of(
              new ProjectView(
                  projectId,
                  h.eventsApplied(),
                  h.canonicalGeneration(),
                  h.lastEventId(),
                  h.lastEventType(),
                  h.lastEventAtMs(),
                  counts,
                  items));
        });
  }

  private static Long nullableLong(java.sql.ResultSet rs, int column) throws java.sql.SQLException {
    long value = rs.getLong(column);
    return rs.wasNull() ? null : value;
  }
}
