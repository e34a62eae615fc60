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
    ChangeInfo change =
        ChangeLedger.change(tx, changeId)
            .orElseThrow(() -> LifecycleException.unknownChange(changeId));
    if (!"verifying".equals(change.state())) {
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
    for (String[] row :
        tx.query(
            "SELECT changeset_id, resource_keys FROM changesets WHERE change_id = ?"
                + " ORDER BY changeset_id",
            rs -> new String[] {rs.getString(1), rs.getString(2)},
            changeId)) {
      if (expected.contains(row[0])) {
        changesetIds.add(row[0]);
        keys.addAll(ChangeLedger.fromJson(row[1]));
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
            + " VALUES (?, ?, ?, ?, ?, ?, 'open', ?, ?) ON CONFLICT DO NOTHING",
        candidateId,
        changeId,
        change.projectId(),
        base,
        key,
        ChangeLedger.toJson(changesetIds),
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

  /** Other Changes of the project with a held claim that overlaps one of {@code keys}. */
  private static List<String> conflicts(Tx tx, ChangeInfo change, Set<String> keys)
      throws SQLException {
    if (keys.isEmpty()) {
      return List.of();
    }
    Set<String> changes = new TreeSet<>();
    for (String[] claim :
        tx.query(
            "SELECT resource_key, change_id FROM claims WHERE project_id = ? AND state = 'held'"
                + " AND change_id <> ?",
            rs -> new String[] {rs.getString(1), rs.getString(2)},
            change.projectId(),
            change.changeId())) {
      for (String k : keys) {
        if (k.startsWith(claim[0]) || claim[0].startsWith(k)) {
          changes.add(claim[1]);
          break;
        }
      }
    }
    return List.copyOf(changes);
  }
}
