package org.rhumbatron.lifecycle;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.rhumbatron.coordinator.outbox.OutboxActor.Appender;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;

/**
 * Candidates, changed in a transaction of the shard that owns {@code change:<id>}. A Candidate is
 * the Change's changesets composed on the project's canonical generation; its id derives from the
 * SHA-256 composition key over (Change id, base generation, sorted changeset ids), so a redelivered
 * candidate.create finds the Candidate it made.
 */
final class CandidateLedger {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Clock clock;

  CandidateLedger(Clock clock) {
    this.clock = clock;
  }

  /** The composition key: hex SHA-256 over {@code changeId US base US id1,id2,...} (sorted). */
  static String compositionKey(String changeId, long baseGeneration, List<String> changesetIds) {
    String text =
        changeId
            + StableIds.UNIT_SEPARATOR
            + baseGeneration
            + StableIds.UNIT_SEPARATOR
            + String.join(",", new TreeSet<>(changesetIds));
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java runtime must provide SHA-256", e);
    }
  }

  /** {@code cand_} + the first 16 bytes of the composition key. */
  static String candidateId(String compositionKey) {
    return "cand_" + compositionKey.substring(0, 32);
  }

  /**
   * Composes the Candidate of a verifying Change on the current canonical generation, from the
   * changesets of its Tasks' completed attempts. When those changesets' resource keys overlap (the
   * same key, or one a path prefix of the other) open claims of other Changes, it waits for a
   * conflict review, unless {@code composeAnyway} (the last delivery).
   */
  Composition compose(
      Tx tx, Appender out, String writer, String changeId, String causedBy, boolean composeAnyway)
      throws SQLException {
    ChangeInfo change = changeOf(tx, changeId);
    if (change.changeState() != ChangeState.VERIFYING) {
      return new Composition(
          Composition.Outcome.NOT_VERIFYING, null, false, -1, List.of(), List.of());
    }
    long base =
        tx.queryLong(
            "SELECT canonical_generation FROM projects WHERE project_id = ?", change.projectId());
    Set<String> expected = new TreeSet<>();
    for (TaskInfo t : ChangeLedger.tasks(tx, changeId)) {
      if (t.completed()) {
        expected.add(LifecycleIds.changesetId(t.taskId(), t.attempt()));
      }
    }
    List<String> changesetIds = new ArrayList<>();
    Set<String> keys = new LinkedHashSet<>();
    for (ChangesetRow row :
        tx.query(
            "SELECT changeset_id, resource_keys FROM changesets WHERE change_id = ?"
                + " ORDER BY changeset_id",
            rs -> new ChangesetRow(rs.getString(1), ChangeLedger.fromJson(rs.getString(2))),
            changeId)) {
      if (expected.contains(row.changesetId())) {
        changesetIds.add(row.changesetId());
        keys.addAll(row.resourceKeys());
      }
    }
    String key = compositionKey(changeId, base, changesetIds);
    String candidateId = candidateId(key);
    boolean exists =
        tx.queryFirst("SELECT 1 FROM candidates WHERE candidate_id = ?", rs -> 1, candidateId)
            .isPresent();
    if (exists) {
      return new Composition(
          Composition.Outcome.COMPOSED, candidateId, false, base, changesetIds, List.of());
    }
    List<String> conflicts = conflicts(tx, change, keys);
    if (!conflicts.isEmpty() && !composeAnyway) {
      return new Composition(
          Composition.Outcome.WAITING_FOR_REVIEW, null, false, base, changesetIds, conflicts);
    }
    long now = clock.millis();
    tx.update(
        "INSERT INTO candidates (candidate_id, change_id, project_id, base_generation,"
            + " composition_key, changeset_ids, state, created_at_ms, updated_at_ms)"
            + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        candidateId,
        changeId,
        change.projectId(),
        base,
        key,
        ChangeLedger.toJson(changesetIds),
        CandidateState.OPEN.dbName(),
        now,
        now);
    tx.update(
        "UPDATE changes SET base_generation = ?, last_activity_at_ms = ?, updated_at_ms = ?"
            + " WHERE change_id = ?",
        base,
        now,
        now,
        changeId);
    ObjectNode payload = ChangeLedger.payload();
    payload.put("candidateId", candidateId);
    payload.put("compositionKey", key);
    payload.set("changesetIds", JSON.valueToTree(changesetIds));
    if (!conflicts.isEmpty()) {
      payload.set("composedDespite", JSON.valueToTree(conflicts));
    }
    out.append(
        Event.builder()
            .eventId(
                StableIds.stableEventId(changeId, EventType.CANDIDATE_CREATED, null, candidateId))
            .eventType(EventType.CANDIDATE_CREATED)
            .tenantId(change.tenantId())
            .projectId(change.projectId())
            .changeId(changeId)
            .actor(writer)
            .canonicalGeneration(base)
            .causedBy(causedBy)
            .correlationId(changeId)
            .timestamp(clock.instant())
            .payload(payload)
            .build());
    return new Composition(
        Composition.Outcome.COMPOSED, candidateId, true, base, changesetIds, conflicts);
  }

  /** A verified Candidate and the generation it was composed on. */
  record Verified(String candidateId, long baseGeneration) {}

  /** The verified Candidate a Change awaits approval with. */
  static Optional<Verified> verifiedCandidate(Tx tx, String changeId) throws SQLException {
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
        tx.queryFirst(
                "SELECT change_id, state, base_generation FROM candidates WHERE candidate_id = ?",
                rs ->
                    new CandidateRow(
                        rs.getString(1), CandidateState.fromDb(rs.getString(2)), rs.getLong(3)),
                candidateId)
            .orElseThrow(() -> new LifecycleException("unknown candidate " + candidateId, true));
    if (row.state() != CandidateState.OPEN) {
      return false;
    }
    ChangeInfo change = changeOf(tx, row.changeId());
    long now = clock.millis();
    CandidateState state = passed ? CandidateState.VERIFIED : CandidateState.REJECTED;
    tx.update(
        "UPDATE candidates SET state = ?, updated_at_ms = ? WHERE candidate_id = ?",
        state.dbName(),
        now,
        candidateId);
    ObjectNode payload = ChangeLedger.payload();
    payload.put("candidateId", candidateId);
    if (reason != null) {
      payload.put("reason", reason);
    }
    EventType type = passed ? EventType.CANDIDATE_VERIFIED : EventType.CANDIDATE_REJECTED;
    out.append(
        candidateEvent(change, type, candidateId, row.baseGeneration(), writer, causedBy, payload));
    if (passed && change.changeState() == ChangeState.VERIFYING) {
      tx.update(
          "UPDATE changes SET state = ?, updated_at_ms = ?,"
              + " last_activity_at_ms = ? WHERE change_id = ?",
          ChangeState.AWAITING_APPROVAL.dbName(),
          now,
          now,
          change.changeId());
      out.append(
          candidateEvent(
              change,
              EventType.CHANGE_AWAITING_APPROVAL,
              candidateId,
              row.baseGeneration(),
              writer,
              causedBy,
              payload.deepCopy()));
    } else {
      tx.update(
          "UPDATE changes SET last_activity_at_ms = ?, updated_at_ms = ? WHERE change_id = ?",
          now,
          now,
          change.changeId());
    }
    return true;
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
    ChangeInfo change = changeOf(tx, changeId);
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
          candidateEvent(
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
    if (!live) {
      tx.update(
          "UPDATE changes SET state = ?, promoted_at_ms = ?, ended_at_ms = ?,"
              + " updated_at_ms = ?, last_activity_at_ms = ? WHERE change_id = ?",
          ChangeState.COMPLETED.dbName(),
          now,
          now,
          now,
          now,
          changeId);
      out.append(
          candidateEvent(
              change,
              EventType.CHANGE_COMPLETED,
              candidateId,
              generation,
              writer,
              causedBy,
              payload.deepCopy()));
      return null;
    }
    String releaseId = StableIds.releaseId(change.projectId(), generation);
    tx.update(
        "INSERT INTO releases (release_id, project_id, generation, change_id, candidate_id, state,"
            + " created_at_ms, updated_at_ms) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)"
            + " ON CONFLICT DO NOTHING",
        releaseId,
        change.projectId(),
        generation,
        changeId,
        candidateId,
        now,
        now);
    tx.update(
        "UPDATE changes SET state = ?, promoted_at_ms = ?, updated_at_ms = ?,"
            + " last_activity_at_ms = ? WHERE change_id = ?",
        ChangeState.RELEASING.dbName(),
        now,
        now,
        now,
        changeId);
    ObjectNode releasing = payload.deepCopy();
    releasing.put("releaseId", releaseId);
    out.append(
        candidateEvent(
            change,
            EventType.CHANGE_RELEASING,
            candidateId,
            generation,
            writer,
            causedBy,
            releasing));
    return releaseId;
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
        tx.queryFirst(
                "SELECT change_id, state, base_generation FROM candidates c WHERE candidate_id = ?"
                    + " AND state IN (?, ?)"
                    + " AND NOT EXISTS (SELECT 1 FROM promotions p"
                    + " WHERE p.candidate_id = c.candidate_id)",
                rs ->
                    new CandidateRow(
                        rs.getString(1), CandidateState.fromDb(rs.getString(2)), rs.getLong(3)),
                candidateId,
                CandidateState.OPEN.dbName(),
                CandidateState.VERIFIED.dbName())
            .orElse(null);
    if (row == null) {
      return false;
    }
    ChangeInfo change = changeOf(tx, row.changeId());
    long now = clock.millis();
    long base = row.baseGeneration();
    tx.update(
        "UPDATE candidates SET state = ?, updated_at_ms = ? WHERE candidate_id = ?",
        CandidateState.STALE.dbName(),
        now,
        candidateId);
    ObjectNode payload = ChangeLedger.payload();
    payload.put("candidateId", candidateId);
    out.append(
        candidateEvent(
            change, EventType.CANDIDATE_STALE, candidateId, base, writer, causedBy, payload));
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
          candidateEvent(
              change, EventType.CHANGE_VERIFYING, candidateId, base, writer, causedBy, back));
    }
    return true;
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
    ReleaseRow row =
        tx.queryFirst(
                "SELECT change_id, candidate_id, generation, state FROM releases"
                    + " WHERE release_id = ?",
                rs ->
                    new ReleaseRow(
                        rs.getString(1), rs.getString(2), rs.getLong(3), rs.getString(4)),
                releaseId)
            .orElseThrow(() -> new LifecycleException("unknown release " + releaseId, true));
    String state = ok ? "completed" : "failed";
    if (state.equals(row.state()) || "completed".equals(row.state())) {
      return false;
    }
    ChangeInfo change = changeOf(tx, row.changeId());
    long now = clock.millis();
    long generation = row.generation();
    tx.update(
        "UPDATE releases SET state = ?, last_error = ?, updated_at_ms = ?, completed_at_ms = ?"
            + " WHERE release_id = ?",
        state,
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
    out.append(candidateEvent(change, type, releaseId, generation, writer, causedBy, payload));
    if (ok
        && tx.update(
                "UPDATE changes SET state = ?, ended_at_ms = ?, updated_at_ms = ?,"
                    + " last_activity_at_ms = ? WHERE change_id = ? AND state = ?",
                ChangeState.COMPLETED.dbName(),
                now,
                now,
                now,
                change.changeId(),
                ChangeState.RELEASING.dbName())
            == 1) {
      out.append(
          candidateEvent(
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

  private Event candidateEvent(
      ChangeInfo change,
      EventType type,
      String candidateId,
      long generation,
      String writer,
      String causedBy,
      ObjectNode payload) {
    return Event.builder()
        .eventId(StableIds.stableEventId(change.changeId(), type, null, candidateId))
        .eventType(type)
        .tenantId(change.tenantId())
        .projectId(change.projectId())
        .changeId(change.changeId())
        .actor(writer)
        .canonicalGeneration(generation)
        .causedBy(causedBy)
        .correlationId(change.changeId())
        .timestamp(clock.instant())
        .payload(payload)
        .build();
  }

  /** Other Changes of the project with a held claim that overlaps one of {@code keys}. */
  private static List<String> conflicts(Tx tx, ChangeInfo change, Set<String> keys)
      throws SQLException {
    if (keys.isEmpty()) {
      return List.of();
    }
    Set<String> changes = new TreeSet<>();
    for (ClaimRow claim :
        tx.query(
            "SELECT resource_key, change_id FROM claims WHERE project_id = ? AND state = 'held'"
                + " AND change_id <> ?",
            rs -> new ClaimRow(rs.getString(1), rs.getString(2)),
            change.projectId(),
            change.changeId())) {
      for (String k : keys) {
        if (k.startsWith(claim.key()) || claim.key().startsWith(k)) {
          changes.add(claim.changeId());
          break;
        }
      }
    }
    return List.copyOf(changes);
  }

  private static ChangeInfo changeOf(Tx tx, String changeId) throws SQLException {
    return ChangeLedger.change(tx, changeId)
        .orElseThrow(() -> LifecycleException.unknownChange(changeId));
  }

  private record ChangesetRow(String changesetId, List<String> resourceKeys) {}

  private record CandidateRow(String changeId, CandidateState state, long baseGeneration) {}

  /** A {@code releases} row; its state (pending, completed, failed) is the release Workflow's. */
  private record ReleaseRow(String changeId, String candidateId, long generation, String state) {}

  private record ClaimRow(String key, String changeId) {}
}
