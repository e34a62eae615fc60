package org.rhumbatron.lifecycle.tasks;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.SQLException;
import java.time.Clock;
import java.util.List;
import org.rhumbatron.coordinator.outbox.OutboxActor.Appender;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.lifecycle.LifecycleIds;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.ChangeLedger;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.claims.ActiveScopes;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An Agent's reports on the Task attempt it holds (woken, running, changeset, completed, failed),
 * in a transaction of the shard that owns {@code change:<id>}, with their Events. A report on a
 * Task the Agent does not hold is refused ({@link TaskNotHeldException}); a repeat writes nothing.
 */
public final class TaskReports {
  private static final Logger log = LoggerFactory.getLogger(TaskReports.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Clock clock;

  public TaskReports(Clock clock) {
    this.clock = clock;
  }

  /**
   * The Task of {@code ref}, checked: it exists, its Change is open, and the Agent holds it for
   * this attempt in one of {@code states}.
   */
  private Held held(Tx tx, TaskRef ref, TaskState... states) throws SQLException {
    TaskInfo t =
        ChangeLedger.task(tx, ref.taskId())
            .orElseThrow(() -> new TaskNotHeldException(ref.taskId(), ref.agentId(), "no task"));
    ChangeInfo change =
        ChangeLedger.change(tx, t.changeId())
            .orElseThrow(() -> LifecycleException.unknownChange(t.changeId()));
    if (t.cancelled()) {
      log.info(
          "late report of agent {} on task {} attempt {} ignored: the task was cancelled ({})",
          ref.agentId(),
          t.taskId(),
          ref.attempt(),
          t.endReason());
      throw new TaskNotHeldException(
          t.taskId(),
          ref.agentId(),
          "the task was cancelled ("
              + t.endReason()
              + "): change "
              + change.changeId()
              + " is "
              + change.state());
    }
    if (change.changeState() != ChangeState.OPEN) {
      throw new TaskNotHeldException(
          t.taskId(), ref.agentId(), "change " + change.changeId() + " is " + change.state());
    }
    if (!ref.agentId().equals(t.agentId()) || ref.attempt() != t.attempt()) {
      throw new TaskNotHeldException(
          t.taskId(),
          ref.agentId(),
          "attempt "
              + t.attempt()
              + " is "
              + (t.agentId() == null ? "unassigned" : "held by " + t.agentId()));
    }
    if (!List.of(states).contains(t.taskState())) {
      throw new TaskNotHeldException(t.taskId(), ref.agentId(), "the task is " + t.state());
    }
    return new Held(change, t);
  }

  private record Held(ChangeInfo change, TaskInfo task) {}

  /** {@code agent.woken}: a relevant wake reached the Agent (once per wake command). */
  void agentWoken(Tx tx, Appender out, String writer, TaskRef ref, String commandId)
      throws SQLException {
    Held h = held(tx, ref, TaskState.ASSIGNED, TaskState.RUNNING);
    ObjectNode payload = ChangeLedger.payload();
    payload.put("agentId", ref.agentId());
    payload.put("attempt", ref.attempt());
    payload.put("commandId", commandId);
    out.append(
        ChangeLedger.event(
            clock,
            h.change(),
            ref.taskId(),
            EventType.AGENT_WOKEN,
            commandId,
            writer,
            commandId,
            payload));
  }

  /**
   * assigned → running ({@code task.running}); a repeat by the same Agent, also after its attempt
   * ended, changes nothing.
   */
  void start(Tx tx, Appender out, String writer, TaskRef ref) throws SQLException {
    if (endedBy(tx, ref, TaskState.COMPLETED) || endedBy(tx, ref, TaskState.FAILED)) {
      return;
    }
    Held h = held(tx, ref, TaskState.ASSIGNED, TaskState.RUNNING);
    if (h.task().taskState() == TaskState.RUNNING) {
      return;
    }
    long now = clock.millis();
    TaskLedger.start(tx, h.task(), now);
    ChangeLedger.touch(tx, ref.changeId(), now);
    out.append(agentEvent(h, EventType.TASK_RUNNING, writer, ref, null));
  }

  /** running → completed ({@code task.completed}); a repeat by the same Agent changes nothing. */
  void complete(Tx tx, Appender out, String writer, TaskRef ref) throws SQLException {
    if (endedBy(tx, ref, TaskState.COMPLETED)) {
      return;
    }
    Held h = held(tx, ref, TaskState.RUNNING);
    finish(tx, h, TaskState.COMPLETED, null);
    out.append(agentEvent(h, EventType.TASK_COMPLETED, writer, ref, null));
  }

  /** assigned or running → failed ({@code task.failed}, with the Agent's reason). */
  void fail(Tx tx, Appender out, String writer, TaskRef ref, String error) throws SQLException {
    if (endedBy(tx, ref, TaskState.FAILED)) {
      return;
    }
    Held h = held(tx, ref, TaskState.ASSIGNED, TaskState.RUNNING);
    finish(tx, h, TaskState.FAILED, error);
    out.append(agentEvent(h, EventType.TASK_FAILED, writer, ref, error));
  }

  /** The changeset of the Task's attempt ({@code changeset.proposed}), once. */
  String proposeChangeset(Tx tx, Appender out, String writer, TaskRef ref) throws SQLException {
    String changesetId = LifecycleIds.changesetId(ref.taskId(), ref.attempt());
    if (endedBy(tx, ref, TaskState.COMPLETED)) {
      return changesetId; // a repeat after the attempt completed: proposed before it
    }
    Held h = held(tx, ref, TaskState.RUNNING);
    List<String> keys = h.task().resourceScopes();
    int inserted =
        tx.update(
            "INSERT INTO changesets (changeset_id, change_id, task_id, project_id, agent_id,"
                + " resource_keys, created_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)"
                + " ON CONFLICT DO NOTHING",
            changesetId,
            ref.changeId(),
            ref.taskId(),
            ref.projectId(),
            ref.agentId(),
            ChangeLedger.toJson(keys),
            clock.millis());
    if (inserted == 1) {
      ObjectNode payload = ChangeLedger.payload();
      payload.put("agentId", ref.agentId());
      payload.put("attempt", ref.attempt());
      payload.put("changesetId", changesetId);
      payload.set("resourceKeys", JSON.valueToTree(keys));
      Event e =
          Event.builder()
              .eventId(
                  StableIds.stableEventId(
                      ref.changeId(),
                      EventType.CHANGESET_PROPOSED,
                      ref.taskId(),
                      ChangeLedger.key(ref.attempt())))
              .eventType(EventType.CHANGESET_PROPOSED)
              .tenantId(h.change().tenantId())
              .projectId(ref.projectId())
              .changeId(ref.changeId())
              .taskId(ref.taskId())
              .actor(writer)
              .resource(keys.isEmpty() ? "change:" + ref.changeId() : keys.get(0))
              .correlationId(ref.changeId())
              .timestamp(clock.instant())
              .payload(payload)
              .build();
      out.append(e);
    }
    return changesetId;
  }

  /** Whether the Agent's attempt already ended in {@code state} (a repeated report). */
  private static boolean endedBy(Tx tx, TaskRef ref, TaskState state) throws SQLException {
    return ChangeLedger.task(tx, ref.taskId())
        .filter(
            t ->
                t.taskState() == state
                    && ref.agentId().equals(t.agentId())
                    && ref.attempt() == t.attempt())
        .isPresent();
  }

  private void finish(Tx tx, Held h, TaskState state, String error) throws SQLException {
    long now = clock.millis();
    TaskLedger.finish(tx, h.task(), state, error, now);
    ActiveScopes.endTask(tx, h.task().taskId());
    ChangeLedger.touch(tx, h.change().changeId(), now);
  }

  private Event agentEvent(Held h, EventType type, String writer, TaskRef ref, String error) {
    ObjectNode payload = ChangeLedger.payload();
    payload.put("agentId", ref.agentId());
    payload.put("attempt", ref.attempt());
    if (error != null) {
      payload.put("reason", error);
    }
    return ChangeLedger.event(
        clock,
        h.change(),
        ref.taskId(),
        type,
        ChangeLedger.key(ref.attempt()),
        writer,
        null,
        payload);
  }
}
