package org.rhumbatron.checker;

import static org.rhumbatron.checker.HistoryChecker.CHANGES_NOT_ENDED;
import static org.rhumbatron.checker.HistoryChecker.SECOND_CHANGE_FOR_REQUEST;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.platform.db.Database;

/** One Change per client request, and every Change ended; the Changes counted by state. */
final class ChangeEnds {
  /**
   * A Change's row with its state as stored: a name no {@link ChangeState} has is counted under it,
   * not thrown on.
   */
  private record ChangeRow(String changeId, String state) {
    boolean open() {
      return ChangeState.OPEN_STATES.stream().anyMatch(s -> s.dbName().equals(state));
    }
  }

  private final Database db;

  ChangeEnds(Database db) {
    this.db = db;
  }

  void check(CheckReport report, Map<String, Set<String>> byRequest) throws Exception {
    byRequest.forEach(
        (request, ids) -> {
          if (ids.size() > 1) {
            report.violation(SECOND_CHANGE_FOR_REQUEST, request + " " + ids);
          }
        });
    db.read(
            tx ->
                tx.query(
                    "SELECT project_id, client_request_id, COUNT(*) FROM changes"
                        + " GROUP BY project_id, client_request_id HAVING COUNT(*) > 1",
                    rs -> rs.getString(1) + "/" + rs.getString(2)))
        .forEach(id -> report.violation(SECOND_CHANGE_FOR_REQUEST, id));
    List<ChangeRow> changes =
        db.read(
            tx ->
                tx.query(
                    "SELECT change_id, state FROM changes",
                    rs -> new ChangeRow(rs.getString(1), rs.getString(2))));
    Map<String, Long> byState = new TreeMap<>();
    for (ChangeRow c : changes) {
      byState.merge(c.state(), 1L, Long::sum);
      if (c.open()) {
        report.violation(
            CHANGES_NOT_ENDED,
            c.changeId() + " (" + c.state() + "; " + whereItStands(c.changeId()) + ")");
      }
    }
    report.total("changes", changes.size());
    byState.forEach((state, n) -> report.total("changes_" + state, n));
  }

  /** A stuck Change's Tasks by state and the dead letters of its commands. */
  private String whereItStands(String changeId) {
    List<String> tasks =
        db.read(
            tx ->
                tx.query(
                    "SELECT state, COUNT(*) FROM tasks WHERE change_id = ? GROUP BY state"
                        + " ORDER BY state",
                    rs -> rs.getLong(2) + " " + rs.getString(1),
                    changeId));
    long deadLetters =
        db.read(
            tx ->
                tx.queryLong(
                    "SELECT COUNT(*) FROM dead_letters WHERE command LIKE ?",
                    "%" + changeId + "%"));
    return (tasks.isEmpty() ? "no tasks" : "tasks " + String.join(", ", tasks))
        + "; dead letters "
        + deadLetters;
  }
}
