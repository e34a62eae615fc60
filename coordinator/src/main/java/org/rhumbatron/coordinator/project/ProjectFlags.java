package org.rhumbatron.coordinator.project;

import java.sql.SQLException;
import org.rhumbatron.platform.db.Tx;

/**
 * The flags of a {@code projects} row whose Events the seed gives to a ResourceShard (archived,
 * deleted, live app), written in the transaction of the shard that owns {@code project:<id>} so
 * each flag and its Event commit together. The root writes the rest of the row; both are this
 * package's code, so the table has one owner. Each write is conditional on the old value: a repeat
 * changes nothing and returns false.
 */
public final class ProjectFlags {
  private ProjectFlags() {}

  /** active → archived. */
  public static boolean archive(Tx tx, String projectId, long now) throws SQLException {
    return tx.update(
            "UPDATE projects SET status = ?, archived_at_ms = ?, updated_at_ms = ?"
                + " WHERE project_id = ? AND status = ?",
            ProjectStatus.ARCHIVED.dbName(),
            now,
            now,
            projectId,
            ProjectStatus.ACTIVE.dbName())
        == 1;
  }

  /** active or archived → deleted. */
  public static boolean delete(Tx tx, String projectId, long now) throws SQLException {
    return tx.update(
            "UPDATE projects SET status = ?, deleted_at_ms = ?, updated_at_ms = ?"
                + " WHERE project_id = ? AND status <> ?",
            ProjectStatus.DELETED.dbName(),
            now,
            now,
            projectId,
            ProjectStatus.DELETED.dbName())
        == 1;
  }

  /** Whether the Project has a live app. */
  public static boolean setLiveApp(Tx tx, String projectId, boolean live, long now)
      throws SQLException {
    return tx.update(
            "UPDATE projects SET has_live_app = ?, updated_at_ms = ?"
                + " WHERE project_id = ? AND has_live_app <> ?",
            live ? 1 : 0,
            now,
            projectId,
            live ? 1 : 0)
        == 1;
  }
}
