package org.rhumbatron.checker;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;
import org.rhumbatron.lifecycle.tasks.TaskState;
import org.rhumbatron.platform.db.Database;

/**
 * After the settle, the project view's Change and Task states must be the lifecycle tables' states:
 * a redelivered older Event applied after a newer one would leave the view behind. A Task back to
 * {@code pending} (its Change reopened) has no Event of its own and is not compared, nor is an item
 * only the view has: a well-formed Event of an unknown Project (the check's poison) reaches the
 * view and never the lifecycle tables.
 */
final class ViewAgreement {
  static final String VIEW_DISAGREES = "view_disagrees_with_lifecycle";

  private ViewAgreement() {}

  /** Counts each Change and Task whose view state is not its table's, or that the view misses. */
  static void check(Database db, CheckReport report) {
    report.expect(VIEW_DISAGREES);
    Map<String, String> view = new HashMap<>();
    db.read(
        tx ->
            tx.query(
                "SELECT kind, item_id, state FROM project_view_items"
                    + " WHERE kind IN ('change', 'task')",
                rs -> view.put(rs.getString(1) + " " + rs.getString(2), rs.getString(3))));
    Map<String, String> tables = new HashMap<>();
    db.read(
        tx ->
            tx.query(
                "SELECT 'change', change_id, state FROM changes UNION ALL"
                    + " SELECT 'task', task_id, state FROM tasks WHERE state <> ?",
                rs -> tables.put(rs.getString(1) + " " + rs.getString(2), rs.getString(3)),
                TaskState.PENDING.dbName()));
    TreeSet<String> items = new TreeSet<>(tables.keySet());
    for (String item : items) {
      String inView = view.get(item);
      String inTables = tables.get(item);
      if (inView == null) {
        report.violation(VIEW_DISAGREES, item + ": not in the view (tables: " + inTables + ")");
      } else if (!inView.equals(inTables)) {
        report.violation(VIEW_DISAGREES, item + ": view " + inView + ", tables " + inTables);
      }
    }
    report.total("view_items_compared", items.size());
  }
}
