package org.rhumbatron.lifecycle.changes;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.rhumbatron.coordinator.outbox.OutboxActor.Appender;
import org.rhumbatron.coordinator.project.ProjectStatus;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.lifecycle.LifecycleIds;
import org.rhumbatron.lifecycle.claims.ActiveScopes;
import org.rhumbatron.lifecycle.tasks.TaskInfo;
import org.rhumbatron.lifecycle.tasks.TaskLedger;
import org.rhumbatron.lifecycle.tasks.TaskState;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.EventType;

/**
 * Creation and the seed's change.dispatch of a Change, in a transaction of the shard that owns
 * {@code change:<id>}, with their Events (stable ids, so a retried step writes nothing new).
 */
public final class ChangeDispatcher {
  private final Clock clock;
  private final int agentsPerChange;

  public ChangeDispatcher(Clock clock, Settings settings) {
    this.clock = clock;
    this.agentsPerChange = settings.get(Settings.AGENTS_PER_CHANGE);
  }

  /**
   * Creates the Change and its Tasks (all pending) and writes {@code change.created}; a repeat with
   * the same {@code (project_id, client_request_id)} returns the first Change and writes nothing
   * ({@code ON CONFLICT DO NOTHING}).
   */
  ChangeCreated create(
      Tx tx,
      Appender out,
      String writer,
      String projectId,
      String clientRequestId,
      String title,
      String parentChangeId,
      WorkGraph graph)
      throws SQLException {
    ProjectRow project =
        tx.queryFirst(
                "SELECT tenant_id, status FROM projects WHERE project_id = ?",
                rs -> new ProjectRow(rs.getString(1), ProjectStatus.fromDb(rs.getString(2))),
                projectId)
            .orElseThrow(() -> LifecycleException.unknownProject(projectId));
    String changeId = LifecycleIds.changeId(projectId, clientRequestId);
    long now = clock.millis();
    int inserted =
        tx.update(
            "INSERT INTO changes (change_id, project_id, client_request_id, title,"
                + " parent_change_id, state, created_at_ms, updated_at_ms, last_activity_at_ms)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            changeId,
            projectId,
            clientRequestId,
            title,
            parentChangeId,
            ChangeState.OPEN.dbName(),
            now,
            now,
            now);
    if (inserted == 0) {
      // The repeat answers with the first Change, even on a project archived since.
      return new ChangeCreated(
          ChangeLedger.changeByRequest(tx, projectId, clientRequestId)
              .orElseThrow(() -> LifecycleException.unknownChange(changeId)),
          false);
    }
    if (project.status() != ProjectStatus.ACTIVE) {
      throw LifecycleException.projectNotActive(projectId, project.status().dbName());
    }
    TaskLedger.insertPending(tx, changeId, projectId, graph, now);
    ChangeInfo change =
        new ChangeInfo(
            changeId,
            projectId,
            project.tenantId(),
            clientRequestId,
            title,
            ChangeState.OPEN,
            null);
    ObjectNode payload = ChangeLedger.payload();
    payload.put("clientRequestId", clientRequestId);
    payload.put("tasks", graph.tasks().size());
    if (parentChangeId != null) {
      payload.put("parentChangeId", parentChangeId);
    }
    if (title != null) {
      payload.put("title", title);
    }
    out.append(
        ChangeLedger.event(
            clock, change, null, EventType.CHANGE_CREATED, null, writer, null, payload));
    return new ChangeCreated(change, true);
  }

  /**
   * The seed's change.dispatch: every pending Task whose dependencies all completed becomes ready
   * ({@code task.ready}); ready Tasks get an Agent ({@code task.assigned}) while fewer than {@code
   * changes.agents-per-change} hold Tasks of the Change; when every Task is completed the Change
   * moves to verifying ({@code verification.started}, reason {@code work_graph_completed}).
   */
  public Dispatched dispatch(Tx tx, Appender out, String writer, String changeId, String causedBy)
      throws SQLException {
    ChangeInfo change =
        ChangeLedger.change(tx, changeId)
            .orElseThrow(() -> LifecycleException.unknownChange(changeId));
    if (change.changeState() != ChangeState.OPEN) {
      return Dispatched.nothing(change.changeState());
    }
    List<TaskInfo> tasks = ChangeLedger.tasks(tx, changeId);
    Map<String, TaskState> states = new HashMap<>();
    tasks.forEach(t -> states.put(t.taskId(), t.taskState()));
    long now = clock.millis();
    int readied = 0;
    List<TaskInfo> current = new ArrayList<>();
    for (TaskInfo t : tasks) {
      if (t.taskState() == TaskState.PENDING
          && t.dependsOn().stream().allMatch(d -> states.get(d) == TaskState.COMPLETED)) {
        t = makeReady(tx, out, writer, change, t, causedBy, now);
        states.put(t.taskId(), t.taskState());
        readied++;
      }
      current.add(t);
    }
    long held = current.stream().filter(TaskInfo::held).count();
    int admitted = 0;
    List<Wake> wakes = new ArrayList<>();
    for (TaskInfo t : current) {
      if (t.taskState() == TaskState.READY && held < agentsPerChange) {
        t = admitAgent(tx, out, writer, change, t, causedBy, now);
        held++;
        admitted++;
      }
      if (t.taskState() == TaskState.ASSIGNED) {
        wakes.add(new Wake(t.projectId(), changeId, t.taskId(), t.agentId(), t.attempt()));
      }
    }
    boolean verification = current.stream().allMatch(TaskInfo::completed);
    if (verification) {
      startVerification(tx, out, writer, change, causedBy, now);
    } else if (readied + admitted > 0) {
      ChangeLedger.touch(tx, changeId, now);
    }
    return new Dispatched(
        (verification ? ChangeState.VERIFYING : change.changeState()).dbName(),
        readied,
        admitted,
        wakes,
        verification);
  }

  TaskInfo makeReady(
      Tx tx, Appender out, String writer, ChangeInfo change, TaskInfo t, String causedBy, long now)
      throws SQLException {
    int attempt = t.attempt() + 1;
    TaskLedger.ready(tx, t, attempt, now);
    ObjectNode payload = ChangeLedger.payload();
    payload.put("attempt", attempt);
    out.append(
        ChangeLedger.event(
            clock,
            change,
            t.taskId(),
            EventType.TASK_READY,
            ChangeLedger.key(attempt),
            writer,
            causedBy,
            payload));
    return t.withState(TaskState.READY, null, attempt);
  }

  /**
   * The seed's {@code admitAgent}: assigns the ready Task to the Agent of its attempt, once; a
   * second dispatch finds it assigned and changes nothing.
   */
  private TaskInfo admitAgent(
      Tx tx, Appender out, String writer, ChangeInfo change, TaskInfo t, String causedBy, long now)
      throws SQLException {
    String agentId = LifecycleIds.agentId(t.taskId(), t.attempt());
    if (!TaskLedger.assign(tx, t, agentId, now)) {
      return t;
    }
    ActiveScopes.admit(
        tx, t.projectId(), change.changeId(), t.taskId(), agentId, t.resourceScopes());
    ObjectNode payload = ChangeLedger.payload();
    payload.put("agentId", agentId);
    payload.put("attempt", t.attempt());
    out.append(
        ChangeLedger.event(
            clock,
            change,
            t.taskId(),
            EventType.TASK_ASSIGNED,
            ChangeLedger.key(t.attempt()),
            writer,
            causedBy,
            payload));
    return t.withState(TaskState.ASSIGNED, agentId, t.attempt());
  }

  private void startVerification(
      Tx tx, Appender out, String writer, ChangeInfo change, String causedBy, long now)
      throws SQLException {
    tx.update(
        "UPDATE changes SET state = ?, reason = NULL, updated_at_ms = ?,"
            + " last_activity_at_ms = ? WHERE change_id = ? AND state = ?",
        ChangeState.VERIFYING.dbName(),
        now,
        now,
        change.changeId(),
        ChangeState.OPEN.dbName());
    ObjectNode payload = ChangeLedger.payload();
    payload.put("reason", "work_graph_completed");
    // A round after verification rejected a Candidate (back to work) has Events of its own.
    long round = ChangeLedger.rejections(tx, change.changeId());
    String key = round == 0 ? null : "r" + round;
    out.append(
        ChangeLedger.event(
            clock, change, null, EventType.CHANGE_VERIFYING, key, writer, causedBy, payload));
    out.append(
        ChangeLedger.event(
            clock, change, null, EventType.VERIFICATION_STARTED, key, writer, causedBy, payload));
  }

  private record ProjectRow(String tenantId, ProjectStatus status) {}
}
