package org.rhumbatron.lifecycle.candidates;

import java.util.List;
import java.util.Optional;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.platform.db.Database;

/**
 * Candidates and releases as the other modules read them (the sweeps, the HTTP API), each read
 * outside any write transaction. Their changes are {@link Approvals}'s.
 */
public final class Candidates {
  private final Database database;

  public Candidates(Database database) {
    this.database = database;
  }

  /** Open or verified Candidates of {@code not_selected} Changes, oldest first. */
  public List<String> candidatesNotSelected(int limit) {
    LifecycleException.requirePositiveLimit(limit);
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
    LifecycleException.requirePositiveLimit(limit);
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

  public Optional<CandidateLedger.Verified> verifiedCandidate(String changeId) {
    return database.read(tx -> CandidateLedger.verifiedCandidate(tx, changeId));
  }

  /** The first column of each row of {@code sql}. */
  private List<String> ids(String sql, Object... args) {
    return database.read(tx -> tx.query(sql, rs -> rs.getString(1), args));
  }
}
