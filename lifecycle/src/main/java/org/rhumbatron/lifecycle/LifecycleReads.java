package org.rhumbatron.lifecycle;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import org.rhumbatron.lifecycle.candidates.CandidateLedger;
import org.rhumbatron.lifecycle.candidates.CandidateState;
import org.rhumbatron.lifecycle.candidates.ReleaseState;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.ChangeLedger;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.claims.ActiveScopes;
import org.rhumbatron.lifecycle.claims.ResourceLedger;
import org.rhumbatron.lifecycle.projects.ProjectInfo;
import org.rhumbatron.lifecycle.projects.ProjectLedger;
import org.rhumbatron.lifecycle.routes.ModelRouted;
import org.rhumbatron.lifecycle.routes.ModelRoutes;
import org.rhumbatron.lifecycle.tasks.TaskInfo;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.lifecycle.tasks.TaskState;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Placeholders;

/**
 * The lifecycle's read API: what other modules may know of its tables (Projects, Changes, Tasks,
 * Candidates, releases), each read outside any write transaction.
 */
public final class LifecycleReads {
  private final Database database;

  public LifecycleReads(Database database) {
    this.database = database;
  }

  public Optional<ProjectInfo> project(String projectId) {
    return database.read(tx -> ProjectLedger.project(tx, projectId));
  }

  /** At most {@code limit} Projects in id order; all statuses when {@code status} is null. */
  public List<ProjectInfo> projects(String status, int limit) {
    requirePositive(limit);
    return database.read(tx -> ProjectLedger.projects(tx, status, limit));
  }

  public Optional<ChangeInfo> change(String changeId) {
    return database.read(tx -> ChangeLedger.change(tx, changeId));
  }

  /** The Changes of a project, oldest first, only those in {@code state} unless it is null. */
  public List<ChangeInfo> changes(String projectId, String state, int limit) {
    requirePositive(limit);
    return database.read(tx -> ChangeLedger.changes(tx, projectId, state, limit));
  }

  public List<TaskInfo> tasks(String changeId) {
    return database.read(tx -> ChangeLedger.tasks(tx, changeId));
  }

  public Optional<TaskInfo> task(String taskId) {
    return database.read(tx -> ChangeLedger.task(tx, taskId));
  }

  /** The open Changes of a project, oldest first. */
  public List<String> openChanges(String projectId) {
    return openChanges(projectId, "");
  }

  /** The open Changes of a project, oldest first, at most {@code limit}. */
  public List<String> openChanges(String projectId, int limit) {
    requirePositive(limit);
    return openChanges(projectId, " LIMIT " + limit);
  }

  private List<String> openChanges(String projectId, String limitClause) {
    return ids(
        "SELECT change_id FROM changes WHERE project_id = ? AND state IN ("
            + Placeholders.of(ChangeState.OPEN_STATES)
            + ") ORDER BY created_at_ms, change_id"
            + limitClause,
        withOpenStates(projectId));
  }

  /** The open fork siblings of {@code changeId} (other variants of its parent). */
  public List<String> openSiblings(String changeId) {
    return ids(
        "SELECT s.change_id FROM changes c JOIN changes s"
            + " ON s.parent_change_id = c.parent_change_id AND s.change_id <> c.change_id"
            + " WHERE c.change_id = ? AND s.state IN ("
            + Placeholders.of(ChangeState.OPEN_STATES)
            + ") ORDER BY s.created_at_ms, s.change_id",
        withOpenStates(changeId));
  }

  /**
   * Open fork variants, oldest first, of which a sibling or the parent completed or was promoted:
   * forks.sweep ends them {@code not_selected}.
   */
  public List<String> forksNotSelected(int limit) {
    requirePositive(limit);
    List<Object> args = new ArrayList<>(StoredStates.dbNames(ChangeState.OPEN_STATES));
    args.add(ChangeState.COMPLETED.dbName());
    return ids(
        "SELECT f.change_id FROM changes f WHERE f.parent_change_id IS NOT NULL"
            + " AND f.state IN ("
            + Placeholders.of(ChangeState.OPEN_STATES)
            + ") AND EXISTS (SELECT 1 FROM changes s WHERE s.change_id <> f.change_id"
            + " AND (s.state = ? OR s.promoted_at_ms IS NOT NULL)"
            + " AND (s.change_id = f.parent_change_id"
            + " OR s.parent_change_id = f.parent_change_id))"
            + " ORDER BY f.created_at_ms, f.change_id LIMIT "
            + limit,
        args.toArray());
  }

  /** Open or verified Candidates of {@code not_selected} Changes, oldest first. */
  public List<String> candidatesNotSelected(int limit) {
    requirePositive(limit);
    return ids(
        "SELECT c.candidate_id FROM candidates c JOIN changes f"
            + " ON f.change_id = c.change_id WHERE f.state = ? AND c.state IN (?, ?)"
            + " ORDER BY c.created_at_ms, c.candidate_id LIMIT "
            + limit,
        ChangeState.NOT_SELECTED.dbName(),
        CandidateState.OPEN.dbName(),
        CandidateState.VERIFIED.dbName());
  }

  /** A Candidate and the Change it was composed for. */
  public record CandidateOf(String candidateId, String changeId) {}

  /**
   * Open or verified Candidates of the project on a base before {@code generation} that the root
   * has not promoted, oldest first: candidates.recompose makes them stale.
   */
  public List<CandidateOf> candidatesBefore(String projectId, long generation, int limit) {
    requirePositive(limit);
    return database.read(
        tx ->
            tx.query(
                "SELECT candidate_id, change_id FROM candidates c WHERE project_id = ?"
                    + " AND state IN (?, ?) AND base_generation < ?"
                    + " AND NOT EXISTS (SELECT 1 FROM promotions p"
                    + " WHERE p.candidate_id = c.candidate_id)"
                    + " ORDER BY created_at_ms, candidate_id LIMIT "
                    + limit,
                rs -> new CandidateOf(rs.getString(1), rs.getString(2)),
                projectId,
                CandidateState.OPEN.dbName(),
                CandidateState.VERIFIED.dbName(),
                generation));
  }

  /** A release of a Change and its state (pending, completed, failed: its Workflow's). */
  public record Release(String releaseId, ReleaseState state) {}

  /** The releases of a Change that have not completed, oldest generation first. */
  public List<Release> openReleases(String changeId) {
    return database.read(
        tx ->
            tx.query(
                "SELECT release_id, state FROM releases WHERE change_id = ?"
                    + " AND state <> ? ORDER BY generation",
                rs -> new Release(rs.getString(1), ReleaseState.fromDb(rs.getString(2))),
                changeId,
                ReleaseState.COMPLETED.dbName()));
  }

  /** A generation the root promoted a Change's Candidate to, and its release (null: none). */
  public record Promotion(long generation, String releaseId) {}

  /** The latest promotion of {@code changeId}'s Candidates, if the root promoted one. */
  public Optional<Promotion> promotion(String changeId) {
    return database.read(
        tx ->
            tx.queryFirst(
                "SELECT p.generation, r.release_id FROM promotions p"
                    + " LEFT JOIN releases r ON r.candidate_id = p.candidate_id"
                    + " WHERE p.change_id = ? ORDER BY p.generation DESC",
                rs -> new Promotion(rs.getLong(1), rs.getString(2)),
                changeId));
  }

  /** The release of a releasing Change that has not started yet, if any. */
  public Optional<String> pendingRelease(String changeId) {
    return database.read(
        tx ->
            tx.queryFirst(
                "SELECT release_id FROM releases WHERE change_id = ? AND state = ?"
                    + " ORDER BY generation DESC",
                rs -> rs.getString(1),
                changeId,
                ReleaseState.PENDING.dbName()));
  }

  /**
   * Whether {@code candidateId} of the verifying Change went stale and no later Candidate of the
   * Change exists: its rebase has not composed one yet, or never went out.
   */
  public boolean staleAwaitingRebase(String changeId, String candidateId) {
    return database.read(
        tx ->
            tx.queryLong(
                    "SELECT COUNT(*) FROM changes ch JOIN candidates c ON c.change_id ="
                        + " ch.change_id WHERE ch.change_id = ? AND ch.state = ?"
                        + " AND c.candidate_id = ? AND c.state = ? AND NOT EXISTS (SELECT 1"
                        + " FROM candidates n WHERE n.change_id = ch.change_id AND n.state <> ?)",
                    changeId,
                    ChangeState.VERIFYING.dbName(),
                    candidateId,
                    CandidateState.STALE.dbName(),
                    CandidateState.STALE.dbName())
                > 0);
  }

  /** Tasks an Agent holds (assigned or running) in open Changes, at most {@code limit}. */
  public List<TaskRef> heldTasks(int limit) {
    return database.read(
        tx ->
            tx.query(
                "SELECT t.project_id, t.change_id, t.task_id, t.agent_id, t.attempts FROM tasks t"
                    + " JOIN changes c ON c.change_id = t.change_id"
                    + " WHERE t.state IN (?, ?) AND c.state = ?"
                    + " ORDER BY t.change_id, t.position LIMIT "
                    + limit,
                rs ->
                    new TaskRef(
                        rs.getString(1),
                        rs.getString(2),
                        rs.getString(3),
                        rs.getString(4),
                        rs.getInt(5)),
                TaskState.ASSIGNED.dbName(),
                TaskState.RUNNING.dbName(),
                ChangeState.OPEN.dbName()));
  }

  /** The Clef-flash decision already recorded for the Agent of {@code taskId} and the Event. */
  public Optional<ModelRouted> modelRoute(String eventId, String taskId) {
    return database.read(tx -> ModelRoutes.find(tx, eventId, taskId));
  }

  /** The active Agents of the project whose scopes overlap {@code keys} (see ActiveScopes). */
  public List<ActiveScopes.Match> overlapping(
      String projectId, Collection<String> keys, String exceptAgent) {
    return database.read(tx -> ActiveScopes.overlapping(tx, projectId, keys, exceptAgent));
  }

  Optional<String> changeOfCandidate(String candidateId) {
    return database.read(
        tx ->
            tx.queryFirst(
                "SELECT change_id FROM candidates WHERE candidate_id = ?",
                rs -> rs.getString(1),
                candidateId));
  }

  Optional<String> changeOfRelease(String releaseId) {
    return database.read(
        tx ->
            tx.queryFirst(
                "SELECT change_id FROM releases WHERE release_id = ?",
                rs -> rs.getString(1),
                releaseId));
  }

  public Optional<CandidateLedger.Verified> verifiedCandidate(String changeId) {
    return database.read(tx -> CandidateLedger.verifiedCandidate(tx, changeId));
  }

  public List<ResourceLedger.HeldClaim> heldClaims(String changeId) {
    return database.read(tx -> ResourceLedger.heldClaims(tx, changeId));
  }

  /** The first column of each row of {@code sql}. */
  private List<String> ids(String sql, Object... args) {
    return database.read(tx -> tx.query(sql, rs -> rs.getString(1), args));
  }

  /** {@code first}, then the stored names of {@link ChangeState#OPEN_STATES}: query parameters. */
  private static Object[] withOpenStates(String first) {
    List<Object> args = new ArrayList<>();
    args.add(first);
    args.addAll(StoredStates.dbNames(ChangeState.OPEN_STATES));
    return args.toArray();
  }

  private static void requirePositive(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, got " + limit);
    }
  }
}
