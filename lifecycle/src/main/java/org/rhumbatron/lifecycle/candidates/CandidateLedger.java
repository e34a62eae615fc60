package org.rhumbatron.lifecycle.candidates;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.SQLException;
import java.time.Clock;
import java.util.Optional;
import org.rhumbatron.coordinator.outbox.OutboxActor.Appender;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.ChangeLedger;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.EventType;

/**
 * A Candidate's verdict and staleness, changed in a transaction of the shard that owns {@code
 * change:<id>}; {@link CandidateComposer} makes it, {@link ReleaseLedger} records its promotion.
 */
public final class CandidateLedger {
  private final Clock clock;
  private final CandidateEvents events;

  CandidateLedger(Clock clock) {
    this.clock = clock;
    this.events = new CandidateEvents(clock);
  }

  /** A verified Candidate and the generation it was composed on. */
  public record Verified(String candidateId, long baseGeneration) {}

  /** The verified Candidate a Change awaits approval with. */
  public static Optional<Verified> verifiedCandidate(Tx tx, String changeId) throws SQLException {
    return tx.queryFirst(
        "SELECT candidate_id, base_generation FROM candidates WHERE change_id = ?"
            + " AND state = ? ORDER BY created_at_ms DESC, candidate_id",
        rs -> new Verified(rs.getString(1), rs.getLong(2)),
        changeId,
        CandidateState.VERIFIED.dbName());
  }

  /**
   * The verifier's verdict on an open Candidate: {@code candidate.verified} and the Change to
   * {@code awaiting_approval}, or {@code candidate.rejected}. Returns false for a repeat (the
   * Candidate has its verdict already) or a Candidate that is no longer open (e.g. stale).
   */
  boolean recordVerdict(
      Tx tx,
      Appender out,
      String writer,
      String candidateId,
      boolean passed,
      String reason,
      String causedBy)
      throws SQLException {
    CandidateRow row =
        candidate(tx, "", candidateId)
            .orElseThrow(() -> new LifecycleException("unknown candidate " + candidateId, true));
    if (row.state() != CandidateState.OPEN) {
      return false;
    }
    ChangeInfo change = CandidateEvents.changeOf(tx, row.changeId());
    long now = clock.millis();
    setState(tx, candidateId, passed ? CandidateState.VERIFIED : CandidateState.REJECTED, now);
    ObjectNode payload = ChangeLedger.payload();
    payload.put("candidateId", candidateId);
    if (reason != null) {
      payload.put("reason", reason);
    }
    EventType type = passed ? EventType.CANDIDATE_VERIFIED : EventType.CANDIDATE_REJECTED;
    out.append(
        events.of(change, type, candidateId, row.baseGeneration(), writer, causedBy, payload));
    if (passed && change.changeState() == ChangeState.VERIFYING) {
      tx.update(
          "UPDATE changes SET state = ?, updated_at_ms = ?,"
              + " last_activity_at_ms = ? WHERE change_id = ?",
          ChangeState.AWAITING_APPROVAL.dbName(),
          now,
          now,
          change.changeId());
      out.append(
          events.of(
              change,
              EventType.CHANGE_AWAITING_APPROVAL,
              candidateId,
              row.baseGeneration(),
              writer,
              causedBy,
              payload.deepCopy()));
    } else {
      ChangeLedger.touch(tx, change.changeId(), now);
    }
    return true;
  }

  /**
   * A Candidate on a base the project has left: {@code candidate.stale}, and its Change, when it
   * awaits approval with it, back to {@code verifying} to compose again on the new base. False when
   * the Candidate was stale (or promoted) already, or the root has promoted it and its Change has
   * not recorded that yet (the promotion's own canonical.advanced can arrive first).
   */
  boolean stale(Tx tx, Appender out, String writer, String candidateId, String causedBy)
      throws SQLException {
    CandidateRow row =
        candidate(
                tx,
                " AND state IN (?, ?) AND NOT EXISTS (SELECT 1 FROM promotions p"
                    + " WHERE p.candidate_id = c.candidate_id)",
                candidateId,
                CandidateState.OPEN.dbName(),
                CandidateState.VERIFIED.dbName())
            .orElse(null);
    if (row == null) {
      return false;
    }
    ChangeInfo change = CandidateEvents.changeOf(tx, row.changeId());
    long now = clock.millis();
    long base = row.baseGeneration();
    setState(tx, candidateId, CandidateState.STALE, now);
    ObjectNode payload = ChangeLedger.payload();
    payload.put("candidateId", candidateId);
    out.append(
        events.of(change, EventType.CANDIDATE_STALE, candidateId, base, writer, causedBy, payload));
    if (tx.update(
            "UPDATE changes SET state = ?, updated_at_ms = ?, last_activity_at_ms = ?"
                + " WHERE change_id = ? AND state IN (?, ?)",
            ChangeState.VERIFYING.dbName(),
            now,
            now,
            change.changeId(),
            ChangeState.AWAITING_APPROVAL.dbName(),
            ChangeState.VERIFYING.dbName())
        == 1) {
      ObjectNode back = payload.deepCopy();
      back.put("reason", "stale_base");
      out.append(
          events.of(change, EventType.CHANGE_VERIFYING, candidateId, base, writer, causedBy, back));
    }
    return true;
  }

  private record CandidateRow(String changeId, CandidateState state, long baseGeneration) {}

  /** The Candidate {@code args[0]}, if it meets {@code condition} (SQL, its table as c). */
  private static Optional<CandidateRow> candidate(Tx tx, String condition, Object... args)
      throws SQLException {
    return tx.queryFirst(
        "SELECT change_id, state, base_generation FROM candidates c WHERE candidate_id = ?"
            + condition,
        rs ->
            new CandidateRow(
                rs.getString(1), CandidateState.fromDb(rs.getString(2)), rs.getLong(3)),
        args);
  }

  private static void setState(Tx tx, String candidateId, CandidateState state, long now)
      throws SQLException {
    tx.update(
        "UPDATE candidates SET state = ?, updated_at_ms = ? WHERE candidate_id = ?",
        state.dbName(),
        now,
        candidateId);
  }
}
