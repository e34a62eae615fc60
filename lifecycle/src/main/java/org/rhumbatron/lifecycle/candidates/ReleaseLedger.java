package org.rhumbatron.lifecycle.candidates;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.SQLException;
import java.time.Clock;
import org.rhumbatron.coordinator.outbox.OutboxActor.Appender;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.ChangeLedger;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;

/**
 * A promoted Candidate's Change to its end, in a transaction of the shard that owns {@code
 * change:<id>}: completed, or releasing with a {@code releases} row until the release Workflow's
 * outcome.
 */
final class ReleaseLedger {
  private final Clock clock;
  private final CandidateEvents events;

  ReleaseLedger(Clock clock) {
    this.clock = clock;
    this.events = new CandidateEvents(clock);
  }

  /**
   * After the root promoted the Change's Candidate to {@code generation}: the Candidate is promoted
   * ({@code candidate.promoted}); with a live app the Change is releasing (a {@code releases} row
   * {@code rel_<project>_<generation>}, returned), without one it is completed. Returns null when
   * no release is due. A repeat writes nothing.
   */
  String promoted(
      Tx tx,
      Appender out,
      String writer,
      String changeId,
      String candidateId,
      long generation,
      String causedBy)
      throws SQLException {
    ChangeInfo change = CandidateEvents.changeOf(tx, changeId);
    long now = clock.millis();
    ObjectNode payload = ChangeLedger.payload();
    payload.put("candidateId", candidateId);
    if (tx.update(
            "UPDATE candidates SET state = ?, updated_at_ms = ? WHERE candidate_id = ?"
                + " AND state <> ?",
            CandidateState.PROMOTED.dbName(),
            now,
            candidateId,
            CandidateState.PROMOTED.dbName())
        == 1) {
      out.append(
          events.of(
              change,
              EventType.CANDIDATE_PROMOTED,
              candidateId,
              generation,
              writer,
              causedBy,
              payload));
    }
    if (change.changeState() != ChangeState.AWAITING_APPROVAL) {
      return change.changeState() == ChangeState.RELEASING
          ? StableIds.releaseId(change.projectId(), generation)
          : null;
    }
    boolean live =
        tx.queryLong("SELECT has_live_app FROM projects WHERE project_id = ?", change.projectId())
            == 1;
    Promoted p = new Promoted(change, candidateId, generation, writer, causedBy, now, payload);
    if (!live) {
      complete(tx, out, p);
      return null;
    }
    return release(tx, out, p);
  }

  /** What {@link #promoted} writes after the Candidate, for the rest of its steps. */
  private record Promoted(
      ChangeInfo change,
      String candidateId,
      long generation,
      String writer,
      String causedBy,
      long now,
      ObjectNode payload) {}

  /** Without a live app the promoted Change is completed. */
  private void complete(Tx tx, Appender out, Promoted p) throws SQLException {
    tx.update(
        "UPDATE changes SET state = ?, promoted_at_ms = ?, ended_at_ms = ?,"
            + " updated_at_ms = ?, last_activity_at_ms = ? WHERE change_id = ?",
        ChangeState.COMPLETED.dbName(),
        p.now(),
        p.now(),
        p.now(),
        p.now(),
        p.change().changeId());
    out.append(
        events.of(
            p.change(),
            EventType.CHANGE_COMPLETED,
            p.candidateId(),
            p.generation(),
            p.writer(),
            p.causedBy(),
            p.payload().deepCopy()));
  }

  /** With a live app the promoted Change is releasing, with a pending {@code releases} row. */
  private String release(Tx tx, Appender out, Promoted p) throws SQLException {
    ChangeInfo change = p.change();
    String releaseId = StableIds.releaseId(change.projectId(), p.generation());
    tx.update(
        "INSERT INTO releases (release_id, project_id, generation, change_id, candidate_id, state,"
            + " created_at_ms, updated_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            + " ON CONFLICT DO NOTHING",
        releaseId,
        change.projectId(),
        p.generation(),
        change.changeId(),
        p.candidateId(),
        ReleaseState.PENDING.dbName(),
        p.now(),
        p.now());
    tx.update(
        "UPDATE changes SET state = ?, promoted_at_ms = ?, updated_at_ms = ?,"
            + " last_activity_at_ms = ? WHERE change_id = ?",
        ChangeState.RELEASING.dbName(),
        p.now(),
        p.now(),
        p.now(),
        change.changeId());
    ObjectNode releasing = p.payload().deepCopy();
    releasing.put("releaseId", releaseId);
    out.append(
        events.of(
            change,
            EventType.CHANGE_RELEASING,
            p.candidateId(),
            p.generation(),
            p.writer(),
            p.causedBy(),
            releasing));
    return releaseId;
  }

  /**
   * The release Workflow's outcome: the release row {@code completed} with {@code
   * release.completed} and its Change {@code completed}, or {@code failed} with {@code
   * release.failed} (the Change stays releasing for release.recover). False for a repeat.
   */
  boolean recordRelease(
      Tx tx,
      Appender out,
      String writer,
      String releaseId,
      boolean ok,
      String error,
      String causedBy)
      throws SQLException {
    ReleaseRow row = release(tx, releaseId);
    ReleaseState state = ok ? ReleaseState.COMPLETED : ReleaseState.FAILED;
    if (row.state() == state || row.state() == ReleaseState.COMPLETED) {
      return false;
    }
    ChangeInfo change = CandidateEvents.changeOf(tx, row.changeId());
    long now = clock.millis();
    long generation = row.generation();
    tx.update(
        "UPDATE releases SET state = ?, last_error = ?, updated_at_ms = ?, completed_at_ms = ?"
            + " WHERE release_id = ?",
        state.dbName(),
        error,
        now,
        ok ? now : null,
        releaseId);
    ObjectNode payload = ChangeLedger.payload();
    payload.put("candidateId", row.candidateId());
    payload.put("releaseId", releaseId);
    if (error != null) {
      payload.put("reason", error);
    }
    EventType type = ok ? EventType.RELEASE_COMPLETED : EventType.RELEASE_FAILED;
    // Keyed by release and attempt outcome: a release that failed, recovered and completed has
    // both Events.
    out.append(events.of(change, type, releaseId, generation, writer, causedBy, payload));
    if (ok && completeReleasing(tx, change.changeId(), now)) {
      out.append(
          events.of(
              change,
              EventType.CHANGE_COMPLETED,
              releaseId,
              generation,
              writer,
              causedBy,
              payload.deepCopy()));
    }
    return true;
  }

  /** A {@code releases} row; its state (pending, completed, failed) is the release Workflow's. */
  private record ReleaseRow(
      String changeId, String candidateId, long generation, ReleaseState state) {}

  private static ReleaseRow release(Tx tx, String releaseId) throws SQLException {
    return tx.queryFirst(
            "SELECT change_id, candidate_id, generation, state FROM releases WHERE release_id = ?",
            rs ->
                new ReleaseRow(
                    rs.getString(1),
                    rs.getString(2),
                    rs.getLong(3),
                    ReleaseState.fromDb(rs.getString(4))),
            releaseId)
        .orElseThrow(() -> new LifecycleException("unknown release " + releaseId, true));
  }

  /** A releasing Change to completed; false when it was not releasing. */
  private static boolean completeReleasing(Tx tx, String changeId, long now) throws SQLException {
    return tx.update(
            "UPDATE changes SET state = ?, ended_at_ms = ?, updated_at_ms = ?,"
                + " last_activity_at_ms = ? WHERE change_id = ? AND state = ?",
            ChangeState.COMPLETED.dbName(),
            now,
            now,
            now,
            changeId,
            ChangeState.RELEASING.dbName())
        == 1;
  }
}
