package org.rhumbatron.integration;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.rhumbatron.coordinator.project.ProjectStatus;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.lifecycle.candidates.Composition;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.Dispatched;
import org.rhumbatron.lifecycle.changes.Settled;
import org.rhumbatron.lifecycle.changes.Wake;
import org.rhumbatron.lifecycle.projects.ProjectInfo;
import org.rhumbatron.lifecycle.projects.Projects;
import org.rhumbatron.lifecycle.workflow.WorkflowEngine;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.platform.queue.Delivery;
import org.rhumbatron.platform.queue.Outcome;
import org.rhumbatron.platform.queue.QueueHandler;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one handler of the integration, verification and release queues: each command type to its
 * handler, and a handler's {@link Result} to the queue's outcome under the {@code integration.*}
 * settings.
 */
public final class IntegrationConsumer implements QueueHandler<Command> {
  private static final Logger log = LoggerFactory.getLogger(IntegrationConsumer.class);

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
  private final Commands commands;
  private final SettledDeadLetters deadLetters;
  private final Clock clock;
  private final Steps steps;
  private final WorkflowStarts starts;
  private final int maxDeliveries;
  private final Duration moreWorkDelay;
  private final Duration conflictReviewDelay;
  private final Map<CommandType, Handler> handlers = new EnumMap<>(CommandType.class);

  public IntegrationConsumer(
      Lifecycle lifecycle,
      WorkflowEngine workflows,
      Commands commands,
      SettledDeadLetters deadLetters,
      Clock clock,
      Settings settings) {
    this.lifecycle = lifecycle;
    this.commands = commands;
    this.deadLetters = deadLetters;
    this.clock = clock;
    this.steps = new Steps(settings.get(Settings.INTEGRATION_STEP_TIMEOUT));
    this.starts = new WorkflowStarts(workflows, commands, steps);
    this.maxDeliveries = settings.get(Settings.INTEGRATION_MAX_DELIVERIES);
    this.moreWorkDelay = settings.get(Settings.INTEGRATION_MORE_WORK_DELAY);
    this.conflictReviewDelay = settings.get(Settings.INTEGRATION_CONFLICT_REVIEW_DELAY);
    IntegrationSweeps sweeps =
        new IntegrationSweeps(
            lifecycle,
            workflows,
            starts,
            commands,
            steps,
            settings.get(Settings.INTEGRATION_ROWS_PER_DELIVERY));
    handlers.put(CommandType.PROJECT_PROVISION, (c, d) -> provisionProject(c));
    handlers.put(CommandType.PROJECT_CLEANUP, (c, d) -> sweeps.cleanupProject(c));
    handlers.put(CommandType.APP_PROVISION, (c, d) -> setLiveApp(c, true));
    handlers.put(CommandType.APP_REMOVE, (c, d) -> setLiveApp(c, false));
    handlers.put(CommandType.CHANGE_DISPATCH, (c, d) -> dispatch(c));
    handlers.put(CommandType.CHANGE_SETTLE, (c, d) -> settle(c));
    handlers.put(CommandType.FORKS_SWEEP, (c, d) -> sweeps.sweepForks(c));
    handlers.put(CommandType.RELEASE_RECOVER, (c, d) -> sweeps.recoverRelease(c));
    handlers.put(CommandType.CANDIDATE_CREATE, this::createCandidate);
    handlers.put(CommandType.CANDIDATES_RECOMPOSE, (c, d) -> sweeps.recompose(c));
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
    Optional<ProjectInfo> project = lifecycle.projects().project(c.projectId());
    if (project.isEmpty() || project.get().status() == ProjectStatus.ACTIVE) {
      return null;
    }
    if (c.changeId() != null) {
      steps.await(lifecycle.projects().endChanges(c.projectId(), c.commandId()));
    }
    return c.commandType().wireName()
        + " "
        + c.commandId()
        + ": project "
        + c.projectId()
        + " is "
        + project.get().status().dbName()
        + " ("
        + Projects.endReason(project.get().status())
        + ")";
  }

  private Result provisionProject(Command c) throws Exception {
    String tenantId = text(c, "tenantId");
    String name = text(c, "name");
    boolean created = steps.await(lifecycle.projects().create(c.projectId(), tenantId, name));
    log.info("project.provision {}: {}", c.projectId(), created ? "created" : "already there");
    return Result.DONE;
  }

  private Result setLiveApp(Command c, boolean live) throws Exception {
    boolean changed =
        steps.await(lifecycle.projects().setLiveApp(c.projectId(), live, c.commandId()));
    log.info(
        "{} {}: {}",
        c.commandType().wireName(),
        c.projectId(),
        changed ? (live ? "app live" : "app removed") : "no change");
    return Result.DONE;
  }

  // Changes --------------------------------------------------------------------------------------

  private Result dispatch(Command c) throws Exception {
    Dispatched d = steps.await(lifecycle.changes().dispatch(c.changeId(), c.commandId()));
    sendWakes(d);
    return Result.DONE;
  }

  private Result settle(Command c) throws Exception {
    Settled s = steps.await(lifecycle.ends().settle(c.changeId(), c.commandId()));
    sendWakes(s.dispatched());
    if (s.decision() == Settled.Decision.CANDIDATE_AGAIN) {
      String projectId =
          lifecycle.changes().change(c.changeId()).map(ChangeInfo::projectId).orElse(c.projectId());
      steps.await(
          commands.send(
              lifecycle.commands().candidateAgain(projectId, c.changeId(), c.commandId())));
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
   * after {@code integration.conflict-review-delay}) until its last delivery, which composes
   * anyway; then sends {@code verification.start} ({@code cmd_<candidate>_verify}).
   */
  private Result createCandidate(Command c, Delivery d) throws Exception {
    boolean last = d.deliveredCount() >= maxDeliveries;
    boolean handedOff = c.payload().path(REVIEW_WAITED).asBoolean(false);
    Composition composed;
    try {
      composed =
          steps.await(
              lifecycle.approvals().compose(c.changeId(), c.commandId(), last || handedOff));
    } catch (LifecycleException e) {
      throw e;
    } catch (Exception e) {
      if (!last || handedOff) {
        throw e;
      }
      // The waits spent this message's deliveries: a fresh one gets the error retries.
      Command next = composeAnyway(c);
      steps.await(commands.sendTo(d.queue(), next));
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
        starts.sendOrStart(verificationStart(c, composed.candidateId()));
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

  private Result startWorkflow(Command c) {
    starts.start(c);
    return Result.DONE;
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
    steps.await(CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)));
  }

  // Small parts ----------------------------------------------------------------------------

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
}
