package org.rhumbatron.lifecycle;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.rhumbatron.coordinator.outbox.OutboxActor.Appender;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rows of Changes and Tasks, changed only inside a transaction of the shard that owns {@code
 * change:<id>}, with their Events (stable ids, so a retried step writes nothing new). Every method
 * takes that transaction and its outbox; the caller ({@link Lifecycle}) puts it on the shard.
 */
final class ChangeLedger {
  private static final Logger log = LoggerFactory.getLogger(ChangeLedger.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final TypeReference<List<String>> STRINGS = new TypeReference<>() {};

  private static final String CHANGE =
      "SELECT c.change_id, c.project_id, p.tenant_id, c.client_request_id, c.title, c.state,"
          + " c.reason FROM changes c JOIN projects p ON p.project_id = c.project_id";
  private static final String TASK =
      "SELECT task_id, change_id, project_id, task_key, title, state, depends_on,"
          + " resource_scopes, agent_id, attempts, last_error, end_reason FROM tasks";

  private final Clock clock;
  private final int agentsPerChange;
  private final int taskAttempts;
  private final int verificationAttempts;

  ChangeLedger(Clock clock, Settings settings) {
    this.clock = clock;
    this.agentsPerChange = settings.get(Settings.AGENTS_PER_CHANGE);
    this.taskAttempts = settings.get(Settings.TASK_ATTEMPTS);
    this.verificationAttempts = settings.get(Settings.VERIFICATION_ATTEMPTS);
  }

  // Reads ----------------------------------------------------------------------------------------

  static Optional<ChangeInfo> change(Tx tx, String changeId) throws SQLException {
    return tx.queryFirst(CHANGE + " WHERE c.change_id = ?", ChangeLedger::changeRow, changeId);
  }

  static Optional<ChangeInfo> changeByRequest(Tx tx, String projectId, String clientRequestId)
      throws SQLException {
    return tx.queryFirst(
        CHANGE + " WHERE c.project_id = ? AND c.client_request_id = ?",
        ChangeLedger::changeRow,
        projectId,
        clientRequestId);
  }

  /**
   * A project's Changes, oldest first, in {@code state} (a name as the API gives it) when it is not
   * null.
   */
  static List<ChangeInfo> changes(Tx tx, String projectId, String state, int limit)
      throws SQLException {
    String where = " WHERE c.project_id = ?" + (state == null ? "" : " AND c.state = ?");
    String order = " ORDER BY c.created_at_ms, c.change_id LIMIT " + limit;
    return state == null
        ? tx.query(CHANGE + where + order, ChangeLedger::changeRow, projectId)
        : tx.query(CHANGE + where + order, ChangeLedger::changeRow, projectId, state);
  }

  static List<TaskInfo> tasks(Tx tx, String changeId) throws SQLException {
    return tx.query(
        TASK + " WHERE change_id = ? ORDER BY position", ChangeLedger::taskRow, changeId);
  }

  static Optional<TaskInfo> task(Tx tx, String taskId) throws SQLException {
    return tx.queryFirst(TASK + " WHERE task_id = ?", ChangeLedger::taskRow, taskId);
  }

  private static ChangeInfo changeRow(ResultSet rs) throws SQLException {
    return new ChangeInfo(
        rs.getString(1),
        rs.getString(2),
        rs.getString(3),
        rs.getString(4),
        rs.getString(5),
        ChangeState.fromDb(rs.getString(6)),
        rs.getString(7));
  }

  private static TaskInfo taskRow(ResultSet rs) throws SQLException {
    return new TaskInfo(
        rs.getString(1),
        rs.getString(2),
        rs.getString(3),
        rs.getString(4),
        rs.getString(5),
        TaskState.fromDb(rs.getString(6)),
        fromJson(rs.getString(7)),
        fromJson(rs.getString(8)),
        rs.getString(9),
        rs.getInt(10),
        rs.getString(11),
        rs.getString(12));
  }

  // Creation -------------------------------------------------------------------------------------

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
                rs -> new ProjectRow(rs.getString(1), rs.getString(2)),
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
          changeByRequest(tx, projectId, clientRequestId)
              .orElseThrow(() -> LifecycleException.unknownChange(changeId)),
          false);
    }
    if (!"active".equals(project.status())) {
      throw LifecycleException.projectNotActive(projectId, project.status());
    }
    List<Object[]> rows = new ArrayList<>();
    int position = 0;
    for (WorkGraph.TaskSpec t : graph.tasks()) {
      rows.add(
          new Object[] {
            LifecycleIds.taskId(changeId, t.key()),
            changeId,
            projectId,
            t.key(),
            position++,
            t.title(),
            TaskState.PENDING.dbName(),
            toJson(t.dependsOn().stream().map(d -> LifecycleIds.taskId(changeId, d)).toList()),
            toJson(t.resourceScopes()),
            now,
            now
          });
    }
    tx.updateBatch(
        "INSERT INTO tasks (task_id, change_id, project_id, task_key, position, title, state,"
            + " depends_on, resource_scopes, attempts, created_at_ms, updated_at_ms)"
            + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)",
        rows);
    ChangeInfo change =
        new ChangeInfo(
            changeId,
            projectId,
            project.tenantId(),
            clientRequestId,
            title,
            ChangeState.OPEN,
            null);
    ObjectNode payload = payload();
    payload.put("clientRequestId", clientRequestId);
    payload.put("tasks", graph.tasks().size());
    if (parentChangeId != null) {
      payload.put("parentChangeId", parentChangeId);
    }
    if (title != null) {
      payload.put("title", title);
    }
    out.append(event(change, null, EventType.CHANGE_CREATED, null, writer, null, payload));
    return new ChangeCreated(change, true);
  }

  // Dispatch -------------------------------------------------------------------------------------

  /**
   * The seed's change.dispatch: every pending Task whose dependencies all completed becomes ready
   * ({@code task.ready}); ready Tasks get an Agent ({@code task.assigned}) while fewer than {@code
   * changes.agents-per-change} hold Tasks of the Change; when every Task is completed the Change
   * moves to verifying ({@code verification.started}, reason {@code work_graph_completed}).
   */
  Dispatched dispatch(Tx tx, Appender out, String writer, String changeId, String causedBy)
      throws SQLException {
    ChangeInfo change = change(tx, changeId).orElseThrow(() -> unknownChange(changeId));
    if (change.changeState() != ChangeState.OPEN) {
      return Dispatched.nothing(change.changeState());
    }
    List<TaskInfo> tasks = tasks(tx, changeId);
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
      touch(tx, changeId, now);
    }
    return new Dispatched(
        (verification ? ChangeState.VERIFYING : change.changeState()).dbName(),
        readied,
        admitted,
        wakes,
        verification);
  }

  private TaskInfo makeReady(
      Tx tx, Appender out, String writer, ChangeInfo change, TaskInfo t, String causedBy, long now)
      throws SQLException {
    int attempt = t.attempt() + 1;
    tx.update(
        "UPDATE tasks SET state = ?, attempts = ?, agent_id = NULL, blocked_limit = NULL,"
            + " ready_at_ms = ?, updated_at_ms = ? WHERE task_id = ?",
        TaskState.READY.dbName(),
        attempt,
        now,
        now,
        t.taskId());
    ObjectNode payload = payload();
    payload.put("attempt", attempt);
    out.append(
        event(change, t.taskId(), EventType.TASK_READY, key(attempt), writer, causedBy, payload));
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
    int moved =
        tx.update(
            "UPDATE tasks SET state = ?, agent_id = ?, updated_at_ms = ?"
                + " WHERE task_id = ? AND state = ?",
            TaskState.ASSIGNED.dbName(),
            agentId,
            now,
            t.taskId(),
            TaskState.READY.dbName());
    if (moved == 0) {
      return t;
    }
    ActiveScopes.admit(
        tx, t.projectId(), change.changeId(), t.taskId(), agentId, t.resourceScopes());
    ObjectNode payload = payload();
    payload.put("agentId", agentId);
    payload.put("attempt", t.attempt());
    out.append(
        event(
            change,
            t.taskId(),
            EventType.TASK_ASSIGNED,
            key(t.attempt()),
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
    ObjectNode payload = payload();
    payload.put("reason", "work_graph_completed");
    // A round after verification rejected a Candidate (back to work) has Events of its own.
    long round = rejections(tx, change.changeId());
    String key = round == 0 ? null : "r" + round;
    out.append(event(change, null, EventType.CHANGE_VERIFYING, key, writer, causedBy, payload));
    out.append(event(change, null, EventType.VERIFICATION_STARTED, key, writer, causedBy, payload));
  }

  // Settle ---------------------------------------------------------------------------------------

  /**
   * The seed's change.settle for a Change that cannot move on its own (see {@link Lifecycle}):
   * starts verification when every Task completed; fails the Change when a Task failed (or was
   * blocked by a dead letter) on its last attempt ({@code changes.task-attempts}); otherwise makes
   * each failed Task ready for its next attempt and dispatches. A verifying Change whose latest
   * Candidate was rejected goes back to work (open, every Task ready for its next attempt) until
   * {@code changes.verification-attempts} Candidates were rejected; then it fails.
   */
  Settled settle(Tx tx, Appender out, String writer, String changeId, String causedBy)
      throws SQLException {
    ChangeInfo change = change(tx, changeId).orElseThrow(() -> unknownChange(changeId));
    long now = clock.millis();
    if (change.changeState() == ChangeState.VERIFYING) {
      Optional<String> rejected =
          tx.queryFirst(
              "SELECT candidate_id FROM candidates WHERE change_id = ? AND state = ?"
                  + " AND NOT EXISTS (SELECT 1 FROM candidates o WHERE o.change_id = ?"
                  + " AND o.state IN (?, ?) AND o.created_at_ms >= candidates.created_at_ms)"
                  + " ORDER BY created_at_ms DESC",
              rs -> rs.getString(1),
              changeId,
              CandidateState.REJECTED.dbName(),
              changeId,
              CandidateState.OPEN.dbName(),
              CandidateState.VERIFIED.dbName());
      if (rejected.isPresent()) {
        long rejections = rejections(tx, changeId);
        if (rejections >= verificationAttempts) {
          String reason =
              "candidate "
                  + rejected.get()
                  + " was rejected by verification ("
                  + rejections
                  + " of "
                  + verificationAttempts
                  + " rejections)";
          return fail(tx, out, writer, change, reason, causedBy, now);
        }
        reopen(tx, out, writer, change, rejected.get(), causedBy, now);
        return new Settled(
            Settled.Decision.DISPATCHED, dispatch(tx, out, writer, changeId, causedBy), null);
      }
    }
    if (change.changeState() != ChangeState.OPEN) {
      return new Settled(
          Settled.Decision.NOTHING, Dispatched.nothing(change.changeState()), change.state());
    }
    List<TaskInfo> tasks = tasks(tx, changeId);
    Optional<TaskInfo> exhausted =
        tasks.stream().filter(t -> t.failed() && t.attempt() >= taskAttempts).findFirst();
    if (exhausted.isPresent()) {
      TaskInfo t = exhausted.get();
      String reason =
          "task "
              + t.taskId()
              + " "
              + t.state()
              + " on attempt "
              + t.attempt()
              + " of "
              + taskAttempts
              + (t.lastError() == null ? "" : ": " + t.lastError());
      return fail(tx, out, writer, change, reason, causedBy, now);
    }
    for (TaskInfo t : tasks) {
      if (t.failed()) {
        makeReady(tx, out, writer, change, t, causedBy, now);
      }
    }
    Dispatched dispatched = dispatch(tx, out, writer, changeId, causedBy);
    touch(tx, changeId, now);
    return new Settled(
        dispatched.verification() ? Settled.Decision.VERIFICATION : Settled.Decision.DISPATCHED,
        dispatched,
        null);
  }

  private Settled fail(
      Tx tx,
      Appender out,
      String writer,
      ChangeInfo change,
      String reason,
      String causedBy,
      long now)
      throws SQLException {
    List<TaskRef> stopped =
        end(
            tx,
            out,
            writer,
            change,
            ChangeState.FAILED,
            EventType.CHANGE_FAILED,
            reason,
            causedBy,
            now);
    return new Settled(
        Settled.Decision.FAILED, Dispatched.nothing(ChangeState.FAILED), reason, stopped);
  }

  /**
   * Back to work after verification rejected {@code candidateId}: the Change is open again ({@code
   * change.reopened}) and every Task pending, so dispatch runs the work graph again, each Task on
   * its next attempt (the attempts count across rounds toward {@code changes.task-attempts}).
   */
  private void reopen(
      Tx tx,
      Appender out,
      String writer,
      ChangeInfo change,
      String candidateId,
      String causedBy,
      long now)
      throws SQLException {
    tx.update(
        "UPDATE changes SET state = ?, reason = ?, updated_at_ms = ?, last_activity_at_ms = ?"
            + " WHERE change_id = ?",
        ChangeState.OPEN.dbName(),
        "candidate " + candidateId + " was rejected: back to work",
        now,
        now,
        change.changeId());
    ObjectNode payload = payload();
    payload.put("candidateId", candidateId);
    payload.put("reason", "candidate_rejected");
    out.append(
        event(change, null, EventType.CHANGE_REOPENED, candidateId, writer, causedBy, payload));
    // Pending again: dispatch readies them in dependency order, each for its next attempt.
    tx.update(
        "UPDATE tasks SET state = ?, agent_id = NULL, updated_at_ms = ? WHERE change_id = ?",
        TaskState.PENDING.dbName(),
        now,
        change.changeId());
    ActiveScopes.endChange(tx, change.changeId());
  }

  // Ends -----------------------------------------------------------------------------------------

  /**
   * What {@link #end} did: whether the Change moved, and the Tasks whose Agents must stop.
   *
   * @param reason the end reason of its cancelled Tasks ({@code change_<state>})
   */
  record Ended(boolean changed, String reason, List<TaskRef> stopped) {}

  /**
   * Moves an open Change to an end state ({@code cancelled}, {@code not_selected}, ...) with its
   * Event, and cancels its Tasks that had not ended. Not changed when it was in that state already;
   * refuses another end state.
   */
  Ended end(
      Tx tx,
      Appender out,
      String writer,
      String changeId,
      ChangeState state,
      EventType type,
      String reason,
      String causedBy)
      throws SQLException {
    ChangeInfo change = change(tx, changeId).orElseThrow(() -> unknownChange(changeId));
    if (state == change.changeState()) {
      return new Ended(false, state.taskEndReason(), List.of());
    }
    if (change.ended()) {
      throw LifecycleException.changeEnded(changeId, change.state(), "end");
    }
    return new Ended(
        true,
        state.taskEndReason(),
        end(tx, out, writer, change, state, type, reason, causedBy, clock.millis()));
  }

  /**
   * The Change's end, in the transaction that writes it: its row and Event, then each Task that had
   * not ended goes to {@code cancelled} ({@code task.cancelled}, caused by the Change's Event).
   * Returns the Tasks an Agent held, whose Agents the caller tells to stop.
   */
  private List<TaskRef> end(
      Tx tx,
      Appender out,
      String writer,
      ChangeInfo change,
      ChangeState state,
      EventType type,
      String reason,
      String causedBy,
      long now)
      throws SQLException {
    tx.update(
        "UPDATE changes SET state = ?, reason = ?, ended_at_ms = ?, updated_at_ms = ?,"
            + " last_activity_at_ms = ? WHERE change_id = ?",
        state.dbName(),
        reason,
        now,
        now,
        now,
        change.changeId());
    ActiveScopes.endChange(tx, change.changeId());
    ObjectNode payload = payload();
    if (reason != null) {
      payload.put("reason", reason);
    }
    Event ended = event(change, null, type, null, writer, causedBy, payload);
    out.append(ended);
    return cancelTasks(tx, out, writer, change, state.taskEndReason(), ended.eventId(), now);
  }

  private List<TaskRef> cancelTasks(
      Tx tx,
      Appender out,
      String writer,
      ChangeInfo change,
      String endReason,
      String causedBy,
      long now)
      throws SQLException {
    List<TaskRef> stopped = new ArrayList<>();
    for (TaskInfo t : tasks(tx, change.changeId())) {
      if (!TaskState.UNENDED.contains(t.taskState())) {
        continue; // completed, failed and blocked ended with an Event of their own
      }
      tx.update(
          "UPDATE tasks SET state = ?, end_reason = ?, ended_at_ms = ?,"
              + " updated_at_ms = ? WHERE task_id = ?",
          TaskState.CANCELLED.dbName(),
          endReason,
          now,
          now,
          t.taskId());
      ObjectNode payload = payload();
      payload.put("reason", endReason);
      payload.put("previousState", t.state());
      payload.put("attempt", t.attempt());
      if (t.held()) {
        // Names the Agent, so the project view frees it.
        payload.put("agentId", t.agentId());
        stopped.add(new TaskRef(t.projectId(), t.changeId(), t.taskId(), t.agentId(), t.attempt()));
      }
      // One end per Change, so one cancel per Task: no key needed for a stable id.
      out.append(
          event(change, t.taskId(), EventType.TASK_CANCELLED, null, writer, causedBy, payload));
    }
    return stopped;
  }

  // Agent reports --------------------------------------------------------------------------------

  /**
   * The Task of {@code ref}, checked: it exists, its Change is open, and the Agent holds it for
   * this attempt in one of {@code states}.
   */
  private Held held(Tx tx, TaskRef ref, TaskState... states) throws SQLException {
    TaskInfo t =
        task(tx, ref.taskId())
            .orElseThrow(() -> new TaskNotHeldException(ref.taskId(), ref.agentId(), "no task"));
    ChangeInfo change = change(tx, t.changeId()).orElseThrow(() -> unknownChange(t.changeId()));
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
    ObjectNode payload = payload();
    payload.put("agentId", ref.agentId());
    payload.put("attempt", ref.attempt());
    payload.put("commandId", commandId);
    out.append(
        event(
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
    tx.update(
        "UPDATE tasks SET state = ?, updated_at_ms = ? WHERE task_id = ?",
        TaskState.RUNNING.dbName(),
        now,
        ref.taskId());
    touch(tx, ref.changeId(), now);
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
            toJson(keys),
            clock.millis());
    if (inserted == 1) {
      ObjectNode payload = payload();
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
                      key(ref.attempt())))
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
    return task(tx, ref.taskId())
        .filter(
            t ->
                t.taskState() == state
                    && ref.agentId().equals(t.agentId())
                    && ref.attempt() == t.attempt())
        .isPresent();
  }

  private void finish(Tx tx, Held h, TaskState state, String error) throws SQLException {
    long now = clock.millis();
    tx.update(
        "UPDATE tasks SET state = ?, last_error = ?, ended_at_ms = ?, updated_at_ms = ?"
            + " WHERE task_id = ?",
        state.dbName(),
        error,
        now,
        now,
        h.task().taskId());
    ActiveScopes.endTask(tx, h.task().taskId());
    touch(tx, h.change().changeId(), now);
  }

  private Event agentEvent(Held h, EventType type, String writer, TaskRef ref, String error) {
    ObjectNode payload = payload();
    payload.put("agentId", ref.agentId());
    payload.put("attempt", ref.attempt());
    if (error != null) {
      payload.put("reason", error);
    }
    return event(h.change(), ref.taskId(), type, key(ref.attempt()), writer, null, payload);
  }

  // Helpers --------------------------------------------------------------------------------------

  private static void touch(Tx tx, String changeId, long now) throws SQLException {
    tx.update(
        "UPDATE changes SET last_activity_at_ms = ?, updated_at_ms = ? WHERE change_id = ?",
        now,
        now,
        changeId);
  }

  /** A Change or Task Event with its stable id ({@code key}: e.g. the Task attempt's). */
  private Event event(
      ChangeInfo change,
      String taskId,
      EventType type,
      String key,
      String writer,
      String causedBy,
      ObjectNode payload) {
    return Event.builder()
        .eventId(StableIds.stableEventId(change.changeId(), type, taskId, key))
        .eventType(type)
        .tenantId(change.tenantId())
        .projectId(change.projectId())
        .changeId(change.changeId())
        .taskId(taskId)
        .actor(writer)
        .causedBy(causedBy)
        .correlationId(change.changeId())
        .timestamp(clock.instant())
        .payload(payload)
        .build();
  }

  private static String key(int attempt) {
    return LifecycleIds.attemptKey(attempt);
  }

  /** The Candidates of the Change that verification rejected. */
  private static long rejections(Tx tx, String changeId) throws SQLException {
    return tx.queryLong(
        "SELECT COUNT(*) FROM candidates WHERE change_id = ? AND state = ?",
        changeId,
        CandidateState.REJECTED.dbName());
  }

  private record ProjectRow(String tenantId, String status) {}

  private static LifecycleException unknownChange(String changeId) {
    return LifecycleException.unknownChange(changeId);
  }

  static ObjectNode payload() {
    return JsonNodeFactory.instance.objectNode();
  }

  static String toJson(List<String> values) {
    try {
      return JSON.writeValueAsString(values);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a list of strings always encodes", e);
    }
  }

  static List<String> fromJson(String json) {
    try {
      return json == null ? List.of() : List.copyOf(JSON.readValue(json, STRINGS));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("not a JSON array of strings: " + json, e);
    }
  }
}
