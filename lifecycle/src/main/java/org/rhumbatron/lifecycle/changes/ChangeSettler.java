package org.rhumbatron.lifecycle.changes;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.rhumbatron.coordinator.outbox.OutboxActor.Appender;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.lifecycle.candidates.CandidateState;
import org.rhumbatron.lifecycle.claims.ActiveScopes;
import org.rhumbatron.lifecycle.tasks.TaskInfo;
import org.rhumbatron.lifecycle.tasks.TaskLedger;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.lifecycle.tasks.TaskState;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;

/**
 * The seed's change.settle and a Change's ends, in a transaction of the shard that owns {@code
 * change:<id>}, with their Events: the Change to an end state with its unended Tasks cancelled.
 */
public final class ChangeSettler {
  private final Clock clock;
  private final int taskAttempts;
  private final int verificationAttempts;
  private final long candidateMissingAfterMs;
  private final ChangeDispatcher dispatcher;

  public ChangeSettler(Clock clock, Settings settings, ChangeDispatcher dispatcher) {
    this.clock = clock;
    this.taskAttempts = settings.get(Settings.TASK_ATTEMPTS);
    this.verificationAttempts = settings.get(Settings.VERIFICATION_ATTEMPTS);
    this.candidateMissingAfterMs = settings.get(Settings.CANDIDATE_MISSING_AFTER).toMillis();
    this.dispatcher = dispatcher;
  }

  /**
   * The seed's change.settle for a Change that cannot move on its own (see {@link ChangeEnds}):
   * starts verification when every Task completed; fails the Change when a Task failed (or was
   * blocked by a dead letter) on its last attempt ({@code changes.task-attempts}); otherwise makes
   * each failed Task ready for its next attempt and dispatches. A verifying Change whose latest
   * Candidate was rejected goes back to work (open, every Task ready for its next attempt) until
   * {@code changes.verification-attempts} Candidates were rejected; then it fails. A verifying
   * Change without a live Candidate, quiet for {@code changes.candidate-missing-after}, lost its
   * candidate.create: the caller sends one again ({@link Settled.Decision#CANDIDATE_AGAIN}).
   */
  Settled settle(Tx tx, Appender out, String writer, String changeId, String causedBy)
      throws SQLException {
    ChangeInfo change =
        ChangeLedger.change(tx, changeId)
            .orElseThrow(() -> LifecycleException.unknownChange(changeId));
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
        long rejections = ChangeLedger.rejections(tx, changeId);
        if (rejections >= verificationAttempts) {
          String reason =
              "candidate "
                  + rejected.get()
                  + " was rejected by verification ("
                  + rejections
                  + " of "
                  + verificationAttempts
                  + " rejections)";
          return failChange(tx, out, writer, change, reason, causedBy, now);
        }
        reopen(tx, out, writer, change, rejected.get(), causedBy, now);
        return new Settled(
            Settled.Decision.DISPATCHED,
            dispatcher.dispatch(tx, out, writer, changeId, causedBy),
            null);
      }
      Optional<Settled> again = candidateMissing(tx, change, now);
      if (again.isPresent()) {
        return again.get();
      }
    }
    if (change.changeState() != ChangeState.OPEN) {
      return new Settled(
          Settled.Decision.NOTHING, Dispatched.nothing(change.changeState()), change.state());
    }
    List<TaskInfo> tasks = ChangeLedger.tasks(tx, changeId);
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
      return failChange(tx, out, writer, change, reason, causedBy, now);
    }
    for (TaskInfo t : tasks) {
      if (t.failed()) {
        dispatcher.makeReady(tx, out, writer, change, t, causedBy, now);
      }
    }
    Dispatched dispatched = dispatcher.dispatch(tx, out, writer, changeId, causedBy);
    ChangeLedger.touch(tx, changeId, now);
    return new Settled(
        dispatched.verification() ? Settled.Decision.VERIFICATION : Settled.Decision.DISPATCHED,
        dispatched,
        null);
  }

  /**
   * A verifying Change without a live Candidate (none, or only stale ones; a rejected one sends it
   * back to work above) and quiet for {@code changes.candidate-missing-after}: its
   * candidate.create, or the rebase of its stale Candidate, was lost. Nothing is written: a settle
   * whose send failed decides the same again, and composing is idempotent, so a candidate.create
   * that was only slow does no harm.
   */
  private Optional<Settled> candidateMissing(Tx tx, ChangeInfo change, long now)
      throws SQLException {
    long quietSince =
        tx.queryLong(
            "SELECT last_activity_at_ms FROM changes WHERE change_id = ?", change.changeId());
    if (now - quietSince < candidateMissingAfterMs
        || tx.queryLong(
                "SELECT COUNT(*) FROM candidates WHERE change_id = ? AND state IN (?, ?)",
                change.changeId(),
                CandidateState.OPEN.dbName(),
                CandidateState.VERIFIED.dbName())
            > 0) {
      return Optional.empty();
    }
    return Optional.of(
        new Settled(
            Settled.Decision.CANDIDATE_AGAIN,
            Dispatched.nothing(ChangeState.VERIFYING),
            "verifying without a live Candidate for " + (now - quietSince) / 1000 + " s"));
  }

  private Settled failChange(
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
    ObjectNode payload = ChangeLedger.payload();
    payload.put("candidateId", candidateId);
    payload.put("reason", "candidate_rejected");
    out.append(
        ChangeLedger.event(
            clock,
            change,
            null,
            EventType.CHANGE_REOPENED,
            candidateId,
            writer,
            causedBy,
            payload));
    // Pending again: dispatch readies them in dependency order, each for its next attempt.
    TaskLedger.reopen(tx, change.changeId(), now);
    ActiveScopes.endChange(tx, change.changeId());
  }

  /**
   * What {@link #end} did: whether the Change moved, and the Tasks whose Agents must stop.
   *
   * @param reason the end reason of its cancelled Tasks ({@code change_<state>})
   */
  public record Ended(boolean changed, String reason, List<TaskRef> stopped) {}

  /**
   * Moves an open Change to an end state ({@code cancelled}, {@code not_selected}, ...) with its
   * Event, and cancels its Tasks that had not ended. Not changed when it was in that state already;
   * refuses another end state.
   */
  public Ended end(
      Tx tx,
      Appender out,
      String writer,
      String changeId,
      ChangeState state,
      EventType type,
      String reason,
      String causedBy)
      throws SQLException {
    ChangeInfo change =
        ChangeLedger.change(tx, changeId)
            .orElseThrow(() -> LifecycleException.unknownChange(changeId));
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
    ObjectNode payload = ChangeLedger.payload();
    if (reason != null) {
      payload.put("reason", reason);
    }
    Event ended = ChangeLedger.event(clock, change, null, type, null, writer, causedBy, payload);
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
    for (TaskInfo t : ChangeLedger.tasks(tx, change.changeId())) {
      if (!TaskState.UNENDED.contains(t.taskState())) {
        continue; // completed, failed and blocked ended with an Event of their own
      }
      TaskLedger.cancel(tx, t, endReason, now);
      ObjectNode payload = ChangeLedger.payload();
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
          ChangeLedger.event(
              clock,
              change,
              t.taskId(),
              EventType.TASK_CANCELLED,
              null,
              writer,
              causedBy,
              payload));
    }
    return stopped;
  }
}
