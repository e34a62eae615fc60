package org.rhumbatron.lifecycle.candidates;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.rhumbatron.coordinator.outbox.OutboxActor.Appender;
import org.rhumbatron.lifecycle.LifecycleIds;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.ChangeLedger;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.claims.ClaimState;
import org.rhumbatron.lifecycle.tasks.TaskInfo;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.Sha256;
import org.rhumbatron.protocol.StableIds;

/**
 * Composes a verifying Change's Candidate, in a transaction of the shard that owns {@code
 * change:<id>}: the Change's changesets on the project's canonical generation. Its id derives from
 * the SHA-256 composition key over (Change id, base generation, sorted changeset ids), so a
 * redelivered candidate.create finds the Candidate it made.
 */
final class CandidateComposer {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Clock clock;
  private final CandidateEvents events;

  CandidateComposer(Clock clock) {
    this.clock = clock;
    this.events = new CandidateEvents(clock);
  }

  /** The composition key: hex SHA-256 over {@code changeId US base US id1,id2,...} (sorted). */
  static String compositionKey(String changeId, long baseGeneration, List<String> changesetIds) {
    String text =
        changeId
            + StableIds.UNIT_SEPARATOR
            + baseGeneration
            + StableIds.UNIT_SEPARATOR
            + String.join(",", new TreeSet<>(changesetIds));
    return Sha256.hex(text);
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
    ChangeInfo change = CandidateEvents.changeOf(tx, changeId);
    if (change.changeState() != ChangeState.VERIFYING) {
      return new Composition(
          Composition.Outcome.NOT_VERIFYING, null, false, -1, List.of(), List.of());
    }
    long base =
        tx.queryLong(
            "SELECT canonical_generation FROM projects WHERE project_id = ?", change.projectId());
    Changesets sets = changesets(tx, changeId);
    String key = compositionKey(changeId, base, sets.ids());
    String candidateId = candidateId(key);
    boolean exists =
        tx.queryFirst("SELECT 1 FROM candidates WHERE candidate_id = ?", rs -> 1, candidateId)
            .isPresent();
    if (exists) {
      return new Composition(
          Composition.Outcome.COMPOSED, candidateId, false, base, sets.ids(), List.of());
    }
    List<String> conflicts = conflicts(tx, change, sets.keys());
    if (!conflicts.isEmpty() && !composeAnyway) {
      return new Composition(
          Composition.Outcome.WAITING_FOR_REVIEW, null, false, base, sets.ids(), conflicts);
    }
    insert(tx, change, candidateId, base, key, sets.ids());
    ObjectNode payload = ChangeLedger.payload();
    payload.put("candidateId", candidateId);
    payload.put("compositionKey", key);
    payload.set("changesetIds", JSON.valueToTree(sets.ids()));
    if (!conflicts.isEmpty()) {
      payload.set("composedDespite", JSON.valueToTree(conflicts));
    }
    out.append(
        events.of(
            change, EventType.CANDIDATE_CREATED, candidateId, base, writer, causedBy, payload));
    return new Composition(
        Composition.Outcome.COMPOSED, candidateId, true, base, sets.ids(), conflicts);
  }

  /** The changesets of the Tasks' completed attempts, in id order, and their resource keys. */
  private record Changesets(List<String> ids, Set<String> keys) {}

  private static Changesets changesets(Tx tx, String changeId) throws SQLException {
    Set<String> expected = new TreeSet<>();
    for (TaskInfo t : ChangeLedger.tasks(tx, changeId)) {
      if (t.completed()) {
        expected.add(LifecycleIds.changesetId(t.taskId(), t.attempt()));
      }
    }
    List<String> ids = new ArrayList<>();
    Set<String> keys = new LinkedHashSet<>();
    for (ChangesetRow row :
        tx.query(
            "SELECT changeset_id, resource_keys FROM changesets WHERE change_id = ?"
                + " ORDER BY changeset_id",
            rs -> new ChangesetRow(rs.getString(1), ChangeLedger.fromJson(rs.getString(2))),
            changeId)) {
      if (expected.contains(row.changesetId())) {
        ids.add(row.changesetId());
        keys.addAll(row.resourceKeys());
      }
    }
    return new Changesets(ids, keys);
  }

  private void insert(
      Tx tx, ChangeInfo change, String candidateId, long base, String key, List<String> ids)
      throws SQLException {
    long now = clock.millis();
    tx.update(
        "INSERT INTO candidates (candidate_id, change_id, project_id, base_generation,"
            + " composition_key, changeset_ids, state, created_at_ms, updated_at_ms)"
            + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        candidateId,
        change.changeId(),
        change.projectId(),
        base,
        key,
        ChangeLedger.toJson(ids),
        CandidateState.OPEN.dbName(),
        now,
        now);
    tx.update(
        "UPDATE changes SET base_generation = ?, last_activity_at_ms = ?, updated_at_ms = ?"
            + " WHERE change_id = ?",
        base,
        now,
        now,
        change.changeId());
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
            "SELECT resource_key, change_id FROM claims WHERE project_id = ? AND state = ?"
                + " AND change_id <> ?",
            rs -> new ClaimRow(rs.getString(1), rs.getString(2)),
            change.projectId(),
            ClaimState.HELD.dbName(),
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

  private record ChangesetRow(String changesetId, List<String> resourceKeys) {}

  private record ClaimRow(String key, String changeId) {}
}
