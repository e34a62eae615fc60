package org.rhumbatron.lifecycle.claims;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.rhumbatron.coordinator.outbox.OutboxActor.Appender;
import org.rhumbatron.coordinator.shard.ResourceShardActor;
import org.rhumbatron.coordinator.shard.ShardAlarmWork;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.lifecycle.changes.ChangeLedger;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.tasks.TaskNotHeldException;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.lifecycle.tasks.TaskState;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;

/**
 * Intents and claims on resource keys, changed only in a transaction of the shard that owns the key
 * ({@code fnv1a32(key) mod shardCount}). These are the shard's own transactions, so their Events
 * have random ids (seed); the row's key makes a repeated report write nothing. A held claim expires
 * at its {@code expires_at_ms}: the shard's alarm ({@link #nextDue}, {@link #runDue}) writes {@code
 * claim.expired}.
 */
public final class ResourceLedger implements ShardAlarmWork {
  // One alarm expires at most this many claims; the alarm comes again for the rest at once.
  private static final int EXPIRE_PER_ALARM = 200;

  private final Clock clock;
  private final Duration claimTtl;

  public ResourceLedger(Clock clock, Duration claimTtl) {
    this.clock = clock;
    this.claimTtl = claimTtl;
  }

  /** {@code intent.declared}: the Agent's Task will touch {@code key}. */
  public void declareIntent(Tx tx, Appender out, ResourceShardActor shard, TaskRef ref, String key)
      throws SQLException {
    String tenant = checkHeld(tx, ref);
    int inserted =
        tx.update(
            "INSERT INTO intents (project_id, resource_key, task_id, change_id, agent_id, attempt,"
                + " declared_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            ref.projectId(),
            key,
            ref.taskId(),
            ref.changeId(),
            ref.agentId(),
            ref.attempt(),
            clock.millis());
    if (inserted == 1) {
      ActiveScopes.declare(tx, ref, key);
      out.append(event(tenant, shard, ref, EventType.INTENT_DECLARED, key, null));
    }
  }

  /**
   * {@code claim.acquired}: the Agent holds {@code key} until it releases it or the claim expires.
   */
  public void acquireClaim(Tx tx, Appender out, ResourceShardActor shard, TaskRef ref, String key)
      throws SQLException {
    String tenant = checkHeld(tx, ref);
    Instant now = clock.instant();
    Instant expires = now.plus(claimTtl);
    int inserted =
        tx.update(
            "INSERT INTO claims (project_id, resource_key, task_id, attempt, change_id, agent_id,"
                + " shard, state, acquired_at_ms, expires_at_ms)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            ref.projectId(),
            key,
            ref.taskId(),
            ref.attempt(),
            ref.changeId(),
            ref.agentId(),
            shard.shard(),
            ClaimState.HELD.dbName(),
            now.toEpochMilli(),
            expires.toEpochMilli());
    if (inserted == 1) {
      shard.armAlarm(tx, expires);
      ObjectNode payload = ChangeLedger.payload();
      payload.put("expiresAt", expires.toString());
      out.append(event(tenant, shard, ref, EventType.CLAIM_ACQUIRED, key, payload));
    }
  }

  /** {@code claim.released}; nothing when the claim is not held (released or expired already). */
  public void releaseClaim(Tx tx, Appender out, ResourceShardActor shard, TaskRef ref, String key)
      throws SQLException {
    int moved =
        tx.update(
            "UPDATE claims SET state = ?, ended_at_ms = ? WHERE project_id = ?"
                + " AND resource_key = ? AND task_id = ? AND attempt = ? AND agent_id = ?"
                + " AND state = ?",
            ClaimState.RELEASED.dbName(),
            clock.millis(),
            ref.projectId(),
            key,
            ref.taskId(),
            ref.attempt(),
            ref.agentId(),
            ClaimState.HELD.dbName());
    if (moved == 1) {
      out.append(
          event(tenantOf(tx, ref.projectId()), shard, ref, EventType.CLAIM_RELEASED, key, null));
    }
  }

  /** The claims the Tasks of {@code changeId} still hold, each with its key. */
  public static List<HeldClaim> heldClaims(Tx tx, String changeId) throws SQLException {
    return tx.query(
        "SELECT project_id, resource_key, task_id, agent_id, attempt FROM claims"
            + " WHERE change_id = ? AND state = ? ORDER BY resource_key, task_id",
        rs ->
            new HeldClaim(
                rs.getString(2),
                new TaskRef(
                    rs.getString(1), changeId, rs.getString(3), rs.getString(4), rs.getInt(5))),
        changeId,
        ClaimState.HELD.dbName());
  }

  public record HeldClaim(String key, TaskRef ref) {}

  @Override
  public Optional<Instant> nextDue(Tx tx, ResourceShardActor shard) throws SQLException {
    return tx.queryFirst(
            "SELECT MIN(expires_at_ms) FROM claims WHERE project_id = ? AND shard = ?"
                + " AND state = ?",
            rs -> {
              long ms = rs.getLong(1);
              return rs.wasNull() ? null : Instant.ofEpochMilli(ms);
            },
            shard.projectId(),
            shard.shard(),
            ClaimState.HELD.dbName())
        .filter(java.util.Objects::nonNull);
  }

  /** Expires the shard's held claims that are due, each with {@code claim.expired}. */
  @Override
  public void runDue(Tx tx, Appender out, ResourceShardActor shard) throws SQLException {
    long now = clock.millis();
    String projectId = shard.projectId();
    List<DueClaim> due =
        tx.query(
            "SELECT resource_key, task_id, attempt, change_id, agent_id FROM claims"
                + " WHERE project_id = ? AND shard = ? AND state = ? AND expires_at_ms <= ?"
                + " ORDER BY expires_at_ms LIMIT "
                + EXPIRE_PER_ALARM,
            rs ->
                new DueClaim(
                    rs.getString(1),
                    new TaskRef(
                        projectId,
                        rs.getString(4),
                        rs.getString(2),
                        rs.getString(5),
                        rs.getInt(3))),
            projectId,
            shard.shard(),
            ClaimState.HELD.dbName(),
            now);
    if (due.isEmpty()) {
      return;
    }
    String tenant = tenantOf(tx, projectId);
    for (DueClaim claim : due) {
      TaskRef ref = claim.ref();
      int moved =
          tx.update(
              "UPDATE claims SET state = ?, ended_at_ms = ? WHERE project_id = ?"
                  + " AND resource_key = ? AND task_id = ? AND attempt = ? AND state = ?",
              ClaimState.EXPIRED.dbName(),
              now,
              projectId,
              claim.key(),
              ref.taskId(),
              ref.attempt(),
              ClaimState.HELD.dbName());
      if (moved == 1) {
        out.append(event(tenant, shard, ref, EventType.CLAIM_EXPIRED, claim.key(), null));
      }
    }
  }

  private record DueClaim(String key, TaskRef ref) {}

  /** The Task as {@link #checkHeld} reads it, with its Change's state and the tenant. */
  private record HeldRow(
      TaskState task, String agentId, int attempt, ChangeState change, String tenantId) {}

  /** The tenant of the Task's project; refuses a report for a Task the Agent does not hold. */
  private static String checkHeld(Tx tx, TaskRef ref) throws SQLException {
    HeldRow row =
        tx.queryFirst(
                "SELECT t.state, t.agent_id, t.attempts, c.state, p.tenant_id FROM tasks t"
                    + " JOIN changes c ON c.change_id = t.change_id"
                    + " JOIN projects p ON p.project_id = t.project_id WHERE t.task_id = ?",
                rs ->
                    new HeldRow(
                        TaskState.fromDb(rs.getString(1)),
                        rs.getString(2),
                        rs.getInt(3),
                        ChangeState.fromDb(rs.getString(4)),
                        rs.getString(5)),
                ref.taskId())
            .orElseThrow(() -> new TaskNotHeldException(ref.taskId(), ref.agentId(), "no task"));
    if (row.change() != ChangeState.OPEN) {
      throw new TaskNotHeldException(
          ref.taskId(),
          ref.agentId(),
          (row.task() == TaskState.CANCELLED ? "the task was cancelled: " : "")
              + "its change is "
              + row.change().dbName());
    }
    if (!ref.agentId().equals(row.agentId())
        || ref.attempt() != row.attempt()
        || row.task() != TaskState.RUNNING) {
      throw new TaskNotHeldException(
          ref.taskId(),
          ref.agentId(),
          "the task is "
              + row.task().dbName()
              + " on attempt "
              + row.attempt()
              + " by "
              + row.agentId());
    }
    return row.tenantId();
  }

  private static String tenantOf(Tx tx, String projectId) throws SQLException {
    return tx.queryFirst(
            "SELECT tenant_id FROM projects WHERE project_id = ?", rs -> rs.getString(1), projectId)
        .orElseThrow(() -> LifecycleException.unknownProject(projectId));
  }

  private Event event(
      String tenant,
      ResourceShardActor shard,
      TaskRef ref,
      EventType type,
      String key,
      ObjectNode payload) {
    ObjectNode p = payload == null ? ChangeLedger.payload() : payload;
    p.put("agentId", ref.agentId());
    p.put("attempt", ref.attempt());
    Instant now = clock.instant();
    return Event.builder()
        .eventId(StableIds.randomEventId(now))
        .eventType(type)
        .tenantId(tenant)
        .projectId(ref.projectId())
        .changeId(ref.changeId())
        .taskId(ref.taskId())
        .actor(shard.writerId())
        .resource(key)
        .correlationId(ref.changeId())
        .timestamp(now)
        .payload(p)
        .build();
  }
}
