package org.rhumbatron.lifecycle;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.rhumbatron.coordinator.project.ProjectStatus;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Placeholders;
import org.rhumbatron.platform.db.Tx;

/**
 * The Changes and Projects the router's maintenance ticks act on (the seed's "Sweep housekeeping"
 * queries on lifecycle tables), each at most {@code limit}, oldest first.
 */
public final class MaintenanceDue {
  private static final Set<ChangeState> SETTLE_STATES =
      EnumSet.of(ChangeState.OPEN, ChangeState.VERIFYING);
  private static final Set<ChangeState> ENDED =
      EnumSet.complementOf(EnumSet.copyOf(ChangeState.OPEN_STATES));

  private final Database database;

  public MaintenanceDue(Database database) {
    this.database = database;
  }

  /** A Change a maintenance command is for, and its Project. */
  public record DueChange(String changeId, String projectId) {}

  /** Changes still releasing that were promoted at or before {@code promotedBefore}. */
  public List<DueChange> releasingSince(long promotedBefore, int limit) {
    return changes(
        "SELECT change_id, project_id FROM changes WHERE state = ?"
            + " AND promoted_at_ms <= ? ORDER BY promoted_at_ms, change_id LIMIT "
            + positive(limit),
        ChangeState.RELEASING.dbName(),
        promotedBefore);
  }

  /**
   * Open or verifying Changes last active between {@code activeSince} and {@code quietSince}
   * (inclusive) that no Agent moves: none of their Tasks is assigned or running.
   */
  public List<DueChange> quietAndUnheld(long quietSince, long activeSince, int limit) {
    List<Object> args = new ArrayList<>(StoredStates.dbNames(SETTLE_STATES));
    args.add(quietSince);
    args.add(activeSince);
    return changes(
        "SELECT change_id, project_id FROM changes c WHERE state IN ("
            + Placeholders.of(SETTLE_STATES)
            + ") AND last_activity_at_ms <= ? AND last_activity_at_ms >= ? AND NOT EXISTS"
            + " (SELECT 1 FROM tasks t WHERE t.change_id = c.change_id"
            + " AND t.state IN "
            + HeldWork.HELD_STATES
            + ") ORDER BY last_activity_at_ms, change_id LIMIT "
            + positive(limit),
        args.toArray());
  }

  /** Archived Projects, in the order they were archived. */
  public List<String> archivedProjects(int limit) {
    return database.read(
        tx ->
            tx.query(
                "SELECT project_id FROM projects WHERE status = ?"
                    + " ORDER BY archived_at_ms, project_id LIMIT "
                    + positive(limit),
                rs -> rs.getString(1),
                ProjectStatus.ARCHIVED.dbName()));
  }

  /** Those of {@code changeIds} whose Change has ended, read in the caller's transaction. */
  public static Set<String> endedAmong(Tx tx, Collection<String> changeIds) throws SQLException {
    if (changeIds.isEmpty()) {
      return Set.of();
    }
    List<Object> args = new ArrayList<>(changeIds);
    args.addAll(StoredStates.dbNames(ENDED));
    return new HashSet<>(
        tx.query(
            "SELECT change_id FROM changes WHERE change_id IN ("
                + Placeholders.of(changeIds)
                + ") AND state IN ("
                + Placeholders.of(ENDED)
                + ")",
            rs -> rs.getString(1),
            args.toArray()));
  }

  private List<DueChange> changes(String sql, Object... args) {
    return database.read(
        tx -> tx.query(sql, rs -> new DueChange(rs.getString(1), rs.getString(2)), args));
  }

  private static int positive(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, got " + limit);
    }
    return limit;
  }
}
