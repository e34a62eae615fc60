package org.rhumbatron.integration;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.rhumbatron.lifecycle.ChangeInfo;
import org.rhumbatron.lifecycle.ChangeState;
import org.rhumbatron.lifecycle.Composition;
import org.rhumbatron.lifecycle.Dispatched;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.lifecycle.ProjectInfo;
import org.rhumbatron.lifecycle.Settled;
import org.rhumbatron.lifecycle.Wake;
import org.rhumbatron.lifecycle.workflow.WorkflowEngine;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.platform.queue.Delivery;
import org.rhumbatron.platform.queue.Outcome;
import org.rhumbatron.platform.queue.QueueHandler;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.EventType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one handler of the integration, verification and release queues, with the seed's limits of
 * the integration module (settings {@code integration.*}): a bounded command ({@code forks.sweep},
 * {@code project.cleanup}, {@code candidates.recompose}) that has more work asks for another
 * delivery, up to {@code integration.max-deliveries}, the last leaving the rest to the next sweep;
 * a {@code candidate.create} that overlaps open claims waits for a conflict review the same way,
 * and its last delivery composes anyway (a fresh {@code <command id>_composes} takes over once when
 * that compose throws). A request that can never succeed is rejected (dead-lettered with the
 * reason); a command of an archived or deleted Project is refused (acknowledged, its Change ended
 * with the Project); a command type without a handler throws, so it is never acked unhandled.
 */
public final class IntegrationConsumer implements QueueHandler<Command> {
  private static final Logger log = LoggerFactory.getLogger(IntegrationConsumer.class);
  private static final Duration STEP_TIMEOUT = Duration.ofSeconds(30);

  /** Payload flag of a candidate.create whose conflict review is over: it composes at once. */
  static final String REVIEW_WAITED = "reviewWaited";

  /** What one delivery of a command did. */
  enum Result {
    DONE,
    /** A bounded command stopped at its bound; the rest needs another delivery. */
    MORE_WORK,
    /** A candidate.create waits for a conflict review. */
    WAITING
  }

  @FunctionalInterface
  interface Handler {
    Result handle(Command command, Delivery delivery) throws Exception;
  }

  private final Lifecycle lifecycle;
  private final WorkflowEngine workflows;
  private final Commands commands;
  private final SettledDeadLetters deadLetters;
  private final Database database;
  private final Clock clock;
  private final int maxDeliveries;
  private final Duration moreWorkDelay;
  private final Duration conflictReviewDelay;
  private final int rowsPerDelivery;
  private final Map<CommandType, Handler> handlers = new EnumMap<>(CommandType.class);

  public IntegrationConsumer(
      Lifecycle lifecycle,
      WorkflowEngine workflows,
      Commands commands,
      SettledDeadLetters deadLetters,
      Database database,
      Clock clock,
      Settings settings) {
    this.lifecycle = lifecycle;
    this.workflows = workflows;
    this.commands = commands;
    this.deadLetters = deadLetters;
    this.database = database;
    this.clock = clock;
    this.maxDeliveries = settings.get(Settings.INTEGRATION_MAX_DELIVERIES);
    this.moreWorkDelay = settings.get(Settings.INTEGRATION_MORE_WORK_DELAY);
    this.conflictReviewDelay = settings.get(Settings.INTEGRATION_CONFLICT_REVIEW_DELAY);
    this.rowsPerDelivery = settings.get(Settings.INTEGRATION_ROWS_PER_DELIVERY);
    handlers.put(CommandType.PROJECT_PROVISION, (c, d) -> provisionProject(c));
    handlers.put(CommandType.PROJECT_CLEANUP, (c, d) -> cleanupProject(c));
    handlers.put(CommandType.APP_PROVISION, (c, d) -> setLiveApp(c, true));
    handlers.put(CommandType.APP_REMOVE, (c, d) -> setLiveApp(c, false));
    handlers.put(CommandType.CHANGE_DISPATCH, (c, d) -> dispatch(c));
    handlers.put(CommandType.CHANGE_SETTLE, (c, d) -> settle(c));
    handlers.put(CommandType.FORKS_SWEEP, (c, d) -> sweepForks(c));
    handlers.put(CommandType.RELEASE_RECOVER, (c, d) -> recoverRelease(c));
    handlers.put(CommandType.CANDIDATE_CREATE, this::createCandidate);
    handlers.put(CommandType.CANDIDATES_RECOMPOSE, (c, d) -> recompose(c));
    handlers.put(CommandType.VERIFICATION_START, (c, d) -> startWorkflow(c));
    handlers.put(CommandType.RELEASE_START, (c, d) -> startWorkflow(c));
  }

  @Override
  public Outcome handle(Command command, Delivery delivery) throws Exception {
    Handler handler = handlers.get(command.commandType());
    if (handler == null) {
      throw new IllegalStateException(
          "integration has no handler for "
              + command.commandType().wireName()
              + " yet: it is retried and dead-lettered, not acknowledged unhandled");
    }
    Result result;
    try {
      String refused = refusedBecause(command);
      if (refused != null) {
        return Outcome.refuse(refused);
      }
      result = handler.handle(command, delivery);
    } catch (LifecycleException e) {
      if (e.permanent()) {
        return Outcome.reject(e.getMessage());
      }
      throw e;
    }
    if (result == Result.DONE) {
      return Outcome.ack();
    }
    if (delivery.deliveredCount() >= maxDeliveries) {
      log.warn(
          "{} {}: {} after handler run {} of {} (server delivery {}); acknowledged",
          command.commandType().wireName(),
          command.commandId(),
          result == Result.WAITING ? "still waiting" : "more work",
          delivery.deliveredCount(),
          maxDeliveries,
          delivery.serverDeliveredCount());
      return Outcome.ack();
    }
    if (result == Result.WAITING) {
      return Outcome.retry(conflictReviewDelay, "waiting for a conflict review");
    }
    return Outcome.retry(moreWorkDelay, "more work after this delivery's bound");
  }

  // Projects and apps ----------------------------------------------------------------------------

  /**
   * Why a command of an archived or deleted Project is not carried out, or null: nothing of such a
   * Project is dispatched, composed, verified, promoted or released. A Change it names that is
   * still open (created in a race with the delete) ends here, as the delete ends the others.
   */
  private String refusedBecause(Command c) throws Exception {
    boolean projectWork = c.changeId() != null || c.commandType() == CommandType.APP_PROVISION;
    if (!projectWork || c.projectId() == null) {
      return null;
    }
    Optional<ProjectInfo> project = lifecycle.project(c.projectId());
    if (project.isEmpty() || "active".equals(project.get().status())) {
      return null;
    }
    if (c.changeId() != null) {
      await(lifecycle.endProjectChanges(c.projectId(), c.commandId()));
    }
    return c.commandType().wireName()
        + " "
        + c.commandId()
        + ": project "
        + c.projectId()
        + " is "
        + project.get().status()
        + " ("
        + Lifecycle.projectEndReason(project.get().status())
        + ")";
  }

  private Result provisionProject(Command c) throws Exception {
    String tenantId = text(c, "tenantId");
    String name = text(c, "name");
    boolean created = await(lifecycle.createProject(c.projectId(), tenantId, name));
    log.info("project.provision {}: {}", c.projectId(), created ? "created" : "already there");
    return Result.DONE;
  }

  private Result setLiveApp(Command c, boolean live) throws Exception {
    boolean changed = await(lifecycle.setLiveApp(c.projectId(), live, c.commandId()));
    log.info(
        "{} {}: {}",
        c.commandType().wireName(),
        c.projectId(),
        changed ? (live ? "app live" : "app removed") : "no change");
    return Result.DONE;
  }

  /** Cancels the open Changes of an archived or deleted Project, at most N per delivery. */
  private Result cleanupProject(Command c) throws Exception {
    ProjectInfo project =
        lifecycle
            .project(c.projectId())
            .orElseThrow(() -> LifecycleException.unknownProject(c.projectId()));
    if ("active".equals(project.status())) {
      log.info("project.cleanup {}: the project is active, nothing to clean up", c.projectId());
      return Result.DONE;
    }
    List<String> open =
        changeIds(
            "SELECT change_id FROM changes WHERE project_id = ? AND state IN "
                + inList(ChangeInfo.OPEN_STATES)
                + " ORDER BY created_at_ms, change_id LIMIT "
                + (rowsPerDelivery + 1),
            c.projectId());
    for (String changeId : open.subList(0, Math.min(open.size(), rowsPerDelivery))) {
      endIfOpen(
          changeId,
          ChangeState.CANCELLED,
          EventType.CHANGE_CANCELLED,
          Lifecycle.projectEndReason(project.status()),
          c.commandId());
    }
    return open.size() > rowsPerDelivery ? Result.MORE_WORK : Result.DONE;
  }

  // Changes --------------------------------------------------------------------------------------

  private Result dispatch(Command c) throws Exception {
    Dispatched d = await(lifecycle.dispatch(c.changeId(), c.commandId()));
    sendWakes(d);
    return Result.DONE;
  }

  private Result settle(Command c) throws Exception {
    Settled s = await(lifecycle.settle(c.changeId(), c.commandId()));
    sendWakes(s.dispatched());
    if (s.decision() == Settled.Decision.CANDIDATE_AGAIN) {
      String projectId =
          lifecycle.change(c.changeId()).map(ChangeInfo::projectId).orElse(c.projectId());
      await(commands.send(lifecycle.candidateAgain(projectId, c.changeId(), c.commandId())));
    }
    int superseded = deadLetters.supersede(c.changeId());
    log.info(
        "change.settle {}: {}{}{}",
        c.changeId(),
        s.decision(),
        s.reason() == null ? "" : " (" + s.reason() + ")",
        superseded == 0 ? "" : ", " + superseded + " dead letters superseded");
    return Result.DONE;
  }

  /**
   * candidate.create: composes the Candidate, or waits for a conflict review (another delivery
   * after {@code integration.conflict-review-delay}, 45 s) until its last delivery, which composes
   * anyway; then sends {@code verification.start} ({@code cmd_<candidate>_verify}).
   */
  private Result createCandidate(Command c, Delivery d) throws Exception {
    boolean last = d.deliveredCount() >= maxDeliveries;
    boolean handedOff = c.payload().path(REVIEW_WAITED).asBoolean(false);
    Composition composed;
    try {
      composed = await(lifecycle.composeCandidate(c.changeId(), c.commandId(), last || handedOff));
    } catch (LifecycleException e) {
      throw e;
    } catch (Exception e) {
      if (!last || handedOff) {
        throw e;
      }
      // The waits spent this message's deliveries: a fresh one gets the error retries.
      Command next = composeAnyway(c);
      await(commands.sendTo(d.queue(), next));
      log.warn(
          "candidate.create {}: composing on its last delivery failed ({}); handed to {}",
          c.commandId(),
          e.toString(),
          next.commandId());
      return Result.DONE;
    }
    switch (composed.outcome()) {
      case WAITING_FOR_REVIEW -> {
        log.info(
            "candidate.create {}: changesets overlap open claims of {}; waiting for a review",
            c.changeId(),
            composed.conflicts());
        return Result.WAITING;
      }
      case NOT_VERIFYING -> {
        log.info("candidate.create {}: the Change is not verifying, nothing to do", c.changeId());
        return Result.DONE;
      }
      default -> {
        sendOrStart(verificationStart(c, composed.candidateId()));
        return Result.DONE;
      }
    }
  }

  /** The candidate.create that composes without waiting, with its own deliveries. */
  private Command composeAnyway(Command c) {
    var payload = c.payload();
    payload.put(REVIEW_WAITED, true);
    return Command.builder()
        .commandId(c.commandId() + "_composes")
        .commandType(c.commandType())
        .projectId(c.projectId())
        .changeId(c.changeId())
        .createdAt(clock.instant())
        .payload(payload)
        .build();
  }

  /**
   * candidates.recompose (after canonical.advanced): every open or verified Candidate of the
   * project on an earlier base goes stale in its shard (its Change, if it awaited approval, back to
   * verifying), and a candidate.create recomposes it on the new base, on the verification queue (a
   * rebase). Bounded: N Candidates a delivery.
   */
  private Result recompose(Command c) throws Exception {
    long generation = c.payload().path("generation").asLong(-1);
    if (generation < 1) {
      throw LifecycleException.payload(
          c.commandType().wireName(), c.commandId(), "lacks generation (1 or more)");
    }
    List<String[]> stale =
        database.read(
            tx ->
                tx.query(
                    "SELECT candidate_id, change_id FROM candidates c WHERE project_id = ?"
                        + " AND state IN ('open', 'verified') AND base_generation < ?"
                        + " AND NOT EXISTS (SELECT 1 FROM promotions p"
                        + " WHERE p.candidate_id = c.candidate_id)"
                        + " ORDER BY created_at_ms, candidate_id LIMIT "
                        + (rowsPerDelivery + 1),
                    rs -> new String[] {rs.getString(1), rs.getString(2)},
                    c.projectId(),
                    generation));
    for (String[] row : stale.subList(0, Math.min(stale.size(), rowsPerDelivery))) {
      await(lifecycle.staleCandidate(row[0], c.commandId()));
      await(
          commands.sendTo(
              org.rhumbatron.protocol.Queue.VERIFICATION,
              lifecycle.rebaseCommand(c.projectId(), row[1], row[0])));
    }
    return stale.size() > rowsPerDelivery ? Result.MORE_WORK : Result.DONE;
  }

  /**
   * verification.start and release.start: the Workflow of the command's idempotency key; a second
   * start of one instance id is rejected by the engine and is not an error here (the redelivery
   * acks, and an instance still running resumes).
   */
  private Result startWorkflow(Command c) {
    Workflows.WorkflowStart s = Workflows.workflowStartFor(c).orElseThrow();
    WorkflowEngine.Start started = workflows.start(s.type(), s.instanceId(), s.input());
    log.info(
        "{} {}: workflow {} {}",
        c.commandType().wireName(),
        c.commandId(),
        s.instanceId(),
        started);
    return Result.DONE;
  }

  /**
   * Sends a Workflow start command; only when the send fails does the producer start the Workflow
   * directly (the seed's workflow-commands.ts).
   */
  void sendOrStart(Command start) throws Exception {
    try {
      await(commands.send(start));
    } catch (Exception e) {
      Workflows.WorkflowStart s = Workflows.workflowStartFor(start).orElseThrow();
      log.warn(
          "{} not sent ({}): starting workflow {} directly",
          start.commandId(),
          e.toString(),
          s.instanceId());
      workflows.start(s.type(), s.instanceId(), s.input());
    }
  }

  private Command verificationStart(Command cause, String candidateId) {
    return Command.builder()
        .commandId(org.rhumbatron.protocol.StableIds.verify(candidateId))
        .commandType(CommandType.VERIFICATION_START)
        .projectId(cause.projectId())
        .changeId(cause.changeId())
        .createdAt(clock.instant())
        .payload(
            com.fasterxml.jackson.databind.node.JsonNodeFactory.instance
                .objectNode()
                .put("candidateId", candidateId))
        .build();
  }

  private void sendWakes(Dispatched d) throws Exception {
    List<CompletableFuture<?>> sends = new ArrayList<>();
    for (Wake w : d.wakes()) {
      sends.add(commands.send(w.command(clock.instant())));
    }
    await(CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)));
  }

  /**
   * Fork variants still open whose sibling (or parent) was promoted become {@code not_selected}, at
   * most N per delivery, and the open Candidates of variants not selected go stale.
   */
  private Result sweepForks(Command c) throws Exception {
    List<String> forks =
        changeIds(
            "SELECT f.change_id FROM changes f WHERE f.parent_change_id IS NOT NULL"
                + " AND f.state IN "
                + inList(ChangeInfo.OPEN_STATES)
                + " AND EXISTS (SELECT 1 FROM changes s WHERE s.change_id <> f.change_id"
                + " AND (s.state = 'completed' OR s.promoted_at_ms IS NOT NULL)"
                + " AND (s.change_id = f.parent_change_id"
                + " OR s.parent_change_id = f.parent_change_id))"
                + " ORDER BY f.created_at_ms, f.change_id LIMIT "
                + (rowsPerDelivery + 1));
    for (String changeId : forks.subList(0, Math.min(forks.size(), rowsPerDelivery))) {
      endIfOpen(
          changeId,
          ChangeState.NOT_SELECTED,
          EventType.CHANGE_NOT_SELECTED,
          "a sibling variant completed",
          c.commandId());
    }
    // The Candidates of variants that were not selected are stale: no one will verify them.
    List<String> leftover =
        changeIds(
            "SELECT c.candidate_id FROM candidates c JOIN changes f ON f.change_id = c.change_id"
                + " WHERE f.state = 'not_selected' AND c.state IN ('open', 'verified')"
                + " ORDER BY c.created_at_ms, c.candidate_id LIMIT "
                + rowsPerDelivery);
    for (String candidateId : leftover) {
      await(lifecycle.staleCandidate(candidateId, c.commandId()));
    }
    return forks.size() > rowsPerDelivery ? Result.MORE_WORK : Result.DONE;
  }

  /**
   * release.recover for a Change still releasing 45 minutes after promotion: a release whose
   * Workflow failed runs again from its first step not done; one whose release.start never reached
   * a Workflow is started again; one still running is left to the engine, which resumes it.
   */
  private Result recoverRelease(Command c) throws Exception {
    List<String[]> rows =
        database.read(
            tx ->
                tx.query(
                    "SELECT release_id, state FROM releases WHERE change_id = ?"
                        + " AND state <> 'completed' ORDER BY generation",
                    rs -> new String[] {rs.getString(1), rs.getString(2)},
                    c.changeId()));
    if (rows.isEmpty()) {
      log.warn("release.recover {}: change {} has no open release", c.commandId(), c.changeId());
    }
    for (String[] row : rows) {
      String releaseId = row[0];
      var instance = workflows.instance(releaseId);
      if (instance.isEmpty()) {
        log.warn("release.recover: {} has no Workflow; starting it", releaseId);
        sendOrStart(lifecycle.releaseStart(c.projectId(), c.changeId(), releaseId));
      } else if (workflows.retryFailed(releaseId)) {
        log.warn("release.recover: {} failed ({}); running it again", releaseId, row[1]);
      } else {
        log.info("release.recover: {} is {}", releaseId, instance.get().state());
      }
    }
    return Result.DONE;
  }

  // Helpers --------------------------------------------------------------------------------------

  /** Ends a Change a sweep found open; one that ended since (a race) is left as it is. */
  private void endIfOpen(
      String changeId, ChangeState state, EventType type, String reason, String causedBy)
      throws Exception {
    try {
      await(lifecycle.endChange(changeId, state, type, reason, causedBy));
    } catch (LifecycleException e) {
      log.info("{} stays as it is: {}", changeId, e.getMessage());
    }
  }

  private List<String> changeIds(String sql, Object... args) {
    return database.read(tx -> tx.query(sql, rs -> rs.getString(1), args));
  }

  private static String inList(List<String> states) {
    return "(" + String.join(", ", states.stream().map(s -> "'" + s + "'").toList()) + ")";
  }

  /** A text field of the payload that the handler needs. */
  private static String text(Command c, String field) {
    var node = c.payload().get(field);
    if (node == null || !node.isTextual() || node.asText().isBlank()) {
      throw LifecycleException.payload(
          c.commandType().wireName(),
          c.commandId(),
          node == null ? "lacks " + field : "field " + field + " is not a non-empty string");
    }
    return node.asText();
  }

  /** Waits for a step; its failure is thrown as itself (a LifecycleException stays one). */
  private static <T> T await(CompletableFuture<T> step) throws Exception {
    try {
      return step.get(STEP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | CompletionException e) {
      throw e.getCause() instanceof Exception cause ? cause : e;
    }
  }
}
