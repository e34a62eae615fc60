package org.rhumbatron.lifecycle.routes;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.SQLException;
import java.time.Clock;
import java.util.Optional;
import org.rhumbatron.coordinator.outbox.OutboxActor.Appender;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.ChangeLedger;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;

/**
 * The Clef-flash decisions of the causal router, in the shard of the Change: a decision and its
 * {@code model.routed} Event are written together, once per Event and Task, so a redelivered batch
 * finds the first decision and does not ask the model again.
 */
public final class ModelRoutes {
  private final Clock clock;

  public ModelRoutes(Clock clock) {
    this.clock = clock;
  }

  public static Optional<ModelRouted> find(Tx tx, String eventId, String taskId)
      throws SQLException {
    return tx.queryFirst(
        "SELECT r.event_id, r.change_id, r.task_id, r.agent_id, r.decision, r.probability,"
            + " r.reason, r.latency_ms, c.project_id FROM model_routes r"
            + " JOIN changes c ON c.change_id = r.change_id WHERE r.event_id = ? AND r.task_id = ?",
        rs -> {
          double p = rs.getDouble(6);
          Double probability = rs.wasNull() ? null : p;
          return new ModelRouted(
              rs.getString(1),
              null,
              rs.getString(9),
              rs.getString(2),
              rs.getString(3),
              rs.getString(4),
              null,
              null,
              rs.getString(5),
              probability,
              rs.getString(7),
              rs.getLong(8));
        },
        eventId,
        taskId);
  }

  /** Records {@code r} with its {@code model.routed} Event; a repeat returns the first decision. */
  public ModelRouted record(Tx tx, Appender out, String writer, ModelRouted r) throws SQLException {
    Optional<ModelRouted> first = find(tx, r.eventId(), r.taskId());
    if (first.isPresent()) {
      return first.get();
    }
    ChangeInfo change =
        ChangeLedger.change(tx, r.changeId())
            .orElseThrow(() -> LifecycleException.unknownChange(r.changeId()));
    tx.update(
        "INSERT INTO model_routes (event_id, task_id, agent_id, change_id, decision, probability,"
            + " reason, latency_ms, decided_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        r.eventId(),
        r.taskId(),
        r.agentId(),
        r.changeId(),
        r.decision(),
        r.probability(),
        r.reason(),
        r.latencyMs(),
        clock.millis());
    ObjectNode payload = ChangeLedger.payload();
    payload.put("eventId", r.eventId());
    payload.put("eventType", r.eventType());
    payload.put("agentId", r.agentId());
    payload.put("eventKey", r.eventKey());
    payload.put("agentKey", r.agentKey());
    payload.put("decision", r.decision());
    if (r.probability() != null) {
      payload.put("probability", r.probability());
    }
    payload.put("reason", r.reason());
    payload.put("latencyMs", r.latencyMs());
    out.append(
        Event.builder()
            .eventId(
                StableIds.stableEventId(
                    change.changeId(), EventType.MODEL_ROUTED, r.taskId(), r.eventId()))
            .eventType(EventType.MODEL_ROUTED)
            .tenantId(change.tenantId())
            .projectId(change.projectId())
            .changeId(change.changeId())
            .taskId(r.taskId())
            .actor(writer)
            .resource(r.agentKey())
            .causedBy(r.eventId())
            .correlationId(change.changeId())
            .timestamp(clock.instant())
            .payload(payload)
            .build());
    return r;
  }
}
