package org.rhumbatron.lifecycle;

import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.rhumbatron.lifecycle.candidates.CandidateState;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.ChangeLedger;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.projects.ProjectInfo;
import org.rhumbatron.lifecycle.projects.ProjectLedger;
import org.rhumbatron.lifecycle.tasks.TaskState;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Placeholders;
import org.rhumbatron.platform.db.Tx;

/**
 * What the dashboard lists of the lifecycle's tables: Projects with their open Changes, Changes
 * with their age and progress, a Change's Candidates. Read outside any write transaction.
 */
public final class LifecycleOverview {
  private final Database database;

  public LifecycleOverview(Database database) {
    this.database = database;
  }

  /** A Project and how many of its Changes are open. */
  public record ProjectSummary(ProjectInfo project, long openChanges) {}

  /**
   * A Change with when it was created (and ended, or null) and its Tasks: how many completed of
   * all.
   */
  public record ChangeSummary(
      ChangeInfo change, Instant createdAt, Instant endedAt, long tasksDone, long tasksTotal) {}

  /** A Candidate of a Change: its base generation and its state (the verifier's verdict). */
  public record CandidateSummary(
      String candidateId, long baseGeneration, CandidateState candidateState, Instant createdAt) {

    public String state() {
      return candidateState.dbName();
    }
  }

  /** At most {@code limit} Projects in id order, all statuses when {@code status} is null. */
  public List<ProjectSummary> projects(String status, int limit) {
    return database.read(
        tx -> {
          List<ProjectSummary> out = new ArrayList<>();
          Map<String, Long> open = openCounts(tx);
          for (ProjectInfo p : ProjectLedger.projects(tx, status, limit)) {
            out.add(new ProjectSummary(p, open.getOrDefault(p.projectId(), 0L)));
          }
          return out;
        });
  }

  /** The Changes of a project, oldest first, only those in {@code state} unless it is null. */
  public List<ChangeSummary> changes(String projectId, String state, int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, got " + limit);
    }
    return database.read(
        tx -> {
          Map<String, long[]> progress = progress(tx, projectId);
          Map<String, Long[]> times = times(tx, projectId);
          List<ChangeSummary> out = new ArrayList<>();
          for (ChangeInfo c : ChangeLedger.changes(tx, projectId, state, limit)) {
            long[] p = progress.getOrDefault(c.changeId(), new long[2]);
            Long[] t = times.getOrDefault(c.changeId(), new Long[2]);
            out.add(new ChangeSummary(c, instant(t[0]), instant(t[1]), p[0], p[1]));
          }
          return out;
        });
  }

  /** The Candidates of a Change, oldest first. */
  public List<CandidateSummary> candidates(String changeId) {
    return database.read(
        tx ->
            tx.query(
                "SELECT candidate_id, base_generation, state, created_at_ms FROM candidates"
                    + " WHERE change_id = ? ORDER BY created_at_ms, candidate_id",
                rs ->
                    new CandidateSummary(
                        rs.getString(1),
                        rs.getLong(2),
                        CandidateState.fromDb(rs.getString(3)),
                        Instant.ofEpochMilli(rs.getLong(4))),
                changeId));
  }

  private static Map<String, Long> openCounts(Tx tx) throws SQLException {
    Map<String, Long> open = new HashMap<>();
    tx.query(
        "SELECT project_id, COUNT(*) FROM changes WHERE state IN ("
            + Placeholders.of(ChangeState.OPEN_STATES)
            + ") GROUP BY project_id",
        rs -> open.put(rs.getString(1), rs.getLong(2)),
        StoredStates.dbNames(ChangeState.OPEN_STATES).toArray());
    return open;
  }

  /** Change id to {done, total} Tasks, over the project's Changes. */
  private static Map<String, long[]> progress(Tx tx, String projectId) throws SQLException {
    Map<String, long[]> out = new HashMap<>();
    tx.query(
        "SELECT change_id, SUM(CASE WHEN state = ? THEN 1 ELSE 0 END), COUNT(*) FROM tasks"
            + " WHERE project_id = ? GROUP BY change_id",
        rs -> out.put(rs.getString(1), new long[] {rs.getLong(2), rs.getLong(3)}),
        TaskState.COMPLETED.dbName(),
        projectId);
    return out;
  }

  /** Change id to {created, ended or null} in epoch milliseconds. */
  private static Map<String, Long[]> times(Tx tx, String projectId) throws SQLException {
    Map<String, Long[]> out = new HashMap<>();
    tx.query(
        "SELECT change_id, created_at_ms, ended_at_ms FROM changes WHERE project_id = ?",
        rs -> {
          long ended = rs.getLong(3);
          return out.put(rs.getString(1), new Long[] {rs.getLong(2), rs.wasNull() ? null : ended});
        },
        projectId);
    return out;
  }

  private static Instant instant(Long epochMs) {
    return epochMs == null ? null : Instant.ofEpochMilli(epochMs);
  }
}
