package org.rhumbatron.integration;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.rhumbatron.coordinator.project.ProjectStatus;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.projects.ProjectInfo;
import org.rhumbatron.lifecycle.workflow.Step;
import org.rhumbatron.lifecycle.workflow.WorkflowDefinition;
import org.rhumbatron.lifecycle.workflow.WorkflowEngine;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The integration module's two Workflows (the seed's {@code workflow-commands.ts}): verification
 * (one per Candidate, instance id = Candidate id) and release (one per promoted generation with a
 * live app, instance id = {@code rel_<project>_<generation>}). Each step is idempotent: its Events
 * have stable ids and its row changes are conditional, so a step run again after a crash writes
 * nothing new.
 */
public final class Workflows {
  public static final String VERIFICATION = "verification";
  public static final String RELEASE = "release";

  private static final Logger log = LoggerFactory.getLogger(Workflows.class);
  private static final Duration STEP_TIMEOUT = Duration.ofSeconds(30);

  private Workflows() {}

  /**
   * A re-run after a {@code stale_base} answer: the Candidate went stale in the approval's commit,
   * and the rebase sent after it may not have gone out (NATS away); the queue drops a repeat.
   */
  static void resendRebase(
      Lifecycle lifecycle, Commands commands, ObjectNode input, String candidateId)
      throws Exception {
    String changeId = input.path("changeId").asText();
    log.info("verification {}: stale, no rebase composed yet; rebase sent again", candidateId);
    commands
        .sendTo(
            org.rhumbatron.protocol.Queue.VERIFICATION,
            lifecycle.commands().rebase(input.path("projectId").asText(), changeId, candidateId))
        .get(STEP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * The Workflow a start command starts: its type and instance id (the seed's workflowStartFor).
   */
  public record WorkflowStart(String type, String instanceId, ObjectNode input) {}

  /**
   * {@code verification.start} → the verification Workflow of {@code payload.candidateId}; {@code
   * release.start} → the release Workflow of {@code payload.releaseId}; empty for other commands.
   */
  public static Optional<WorkflowStart> workflowStartFor(Command c) {
    String key =
        switch (c.commandType()) {
          case VERIFICATION_START -> "candidateId";
          case RELEASE_START -> "releaseId";
          default -> null;
        };
    if (key == null) {
      return Optional.empty();
    }
    String id = c.payload().path(key).asText("");
    if (id.isBlank()) {
      throw org.rhumbatron.lifecycle.LifecycleException.payload(
          c.commandType().wireName(), c.commandId(), "lacks " + key);
    }
    ObjectNode input = JsonNodeFactory.instance.objectNode();
    input.put("projectId", c.projectId());
    input.put("changeId", c.changeId());
    input.put(key, id);
    input.put("commandId", c.commandId());
    return Optional.of(
        new WorkflowStart(
            c.commandType() == CommandType.VERIFICATION_START ? VERIFICATION : RELEASE, id, input));
  }

  /** Registers both Workflows on {@code engine}. */
  public static void register(
      WorkflowEngine engine,
      Lifecycle lifecycle,
      Verifier verifier,
      Releaser releaser,
      Commands commands,
      Clock clock,
      boolean autoApprove) {
    engine.register(
        WorkflowDefinition.of(
                VERIFICATION,
                new Step(
                    "verify",
                    ctx -> {
                      var in = ctx.input();
                      Verifier.Verdict v =
                          verifier.verify(
                              in.path("projectId").asText(),
                              in.path("changeId").asText(),
                              ctx.instanceId());
                      ObjectNode out = JsonNodeFactory.instance.objectNode();
                      out.put("passed", v.passed());
                      out.put("reason", v.reason());
                      return out;
                    }),
                new Step(
                    "record",
                    ctx -> {
                      var verdict = ctx.result("verify");
                      boolean passed = verdict.path("passed").asBoolean();
                      String reason =
                          verdict.path("reason").isNull() ? null : verdict.path("reason").asText();
                      lifecycle
                          .approvals()
                          .recordVerdict(
                              ctx.instanceId(),
                              passed,
                              reason,
                              ctx.input().path("commandId").asText())
                          .get(STEP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                      if (!passed) {
                        settle(commands, clock, ctx.input(), ctx.instanceId());
                      }
                      return null;
                    }),
                new Step(
                    "approve",
                    ctx -> {
                      // changes.auto-approve stands in for the operator (demo, benchmarks).
                      String changeId = ctx.input().path("changeId").asText();
                      ChangeState state =
                          lifecycle
                              .changes()
                              .change(changeId)
                              .map(ChangeInfo::changeState)
                              .orElse(null);
                      if (autoApprove && state == ChangeState.RELEASING) {
                        // A re-run after the approval went through: its release.start may not
                        // have gone out before a crash; the queue drops a repeat.
                        var release = lifecycle.candidates().pendingRelease(changeId);
                        if (release.isPresent()) {
                          commands
                              .send(
                                  lifecycle
                                      .commands()
                                      .releaseStart(
                                          ctx.input().path("projectId").asText(),
                                          changeId,
                                          release.get()))
                              .get(STEP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                        }
                        return null;
                      }
                      if (autoApprove
                          && state == ChangeState.VERIFYING
                          && lifecycle
                              .candidates()
                              .staleAwaitingRebase(changeId, ctx.instanceId())) {
                        resendRebase(lifecycle, commands, ctx.input(), ctx.instanceId());
                        return null;
                      }
                      if (!autoApprove || state != ChangeState.AWAITING_APPROVAL) {
                        return null; // also a re-run after the approval completed the Change
                      }
                      var approval =
                          lifecycle
                              .approvals()
                              .approve(changeId)
                              .get(STEP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                      ObjectNode out = JsonNodeFactory.instance.objectNode();
                      out.put("promotion", approval.promotion().name());
                      out.put("generation", approval.generation());
                      return out;
                    }))
            .onFailed(
                (id, input, error) -> {
                  lifecycle
                      .approvals()
                      .recordVerdict(
                          id,
                          false,
                          "verification failed: " + error,
                          input.path("commandId").asText())
                      .get(STEP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                  settle(commands, clock, input, id);
                }));
    engine.register(
        WorkflowDefinition.of(
                RELEASE,
                new Step(
                    "release",
                    ctx -> {
                      String projectId = ctx.input().path("projectId").asText();
                      // A Project archived or deleted since release.start (or between tries)
                      // does not go live: the release fails with the reason.
                      Optional<ProjectStatus> status =
                          lifecycle.projects().project(projectId).map(ProjectInfo::status);
                      if (status.orElse(null) != ProjectStatus.ACTIVE) {
                        throw new IllegalStateException(
                            "project "
                                + projectId
                                + " is "
                                + status.map(ProjectStatus::dbName).orElse("gone")
                                + ": nothing is released");
                      }
                      releaser.release(projectId, ctx.instanceId());
                      return null;
                    }),
                new Step(
                    "record",
                    ctx -> {
                      lifecycle
                          .approvals()
                          .recordRelease(
                              ctx.instanceId(), true, null, ctx.input().path("commandId").asText())
                          .get(STEP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                      return null;
                    }))
            .onFailed(
                (id, input, error) -> {
                  log.warn("release {} failed: {}", id, error);
                  lifecycle
                      .approvals()
                      .recordRelease(id, false, error, input.path("commandId").asText())
                      .get(STEP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                }));
  }

  /** A rejected Candidate: change.settle decides what its Change does next. */
  private static void settle(Commands commands, Clock clock, ObjectNode input, String candidateId)
      throws Exception {
    ObjectNode payload = JsonNodeFactory.instance.objectNode();
    payload.put("candidateId", candidateId);
    commands
        .send(
            Command.builder()
                .commandId("cmd_" + candidateId + "_rejected")
                .commandType(CommandType.CHANGE_SETTLE)
                .projectId(input.path("projectId").asText())
                .changeId(input.path("changeId").asText())
                .createdAt(clock.instant())
                .payload(payload)
                .build())
        .get(STEP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** What the release Workflow runs to put a promoted generation live. */
  public interface Releaser {
    void release(String projectId, String releaseId) throws Exception;
  }

  /** A release for the demo, the tests and the benchmarks: it takes the simulated duration. */
  public static Releaser simulatedReleaser(Settings settings) {
    Duration duration = settings.get(Settings.SIMULATED_RELEASE_DURATION);
    return (projectId, releaseId) -> {
      if (!duration.isZero()) {
        Thread.sleep(duration.toMillis()); // the simulated work itself
      }
    };
  }
}
