package org.rhumbatron.integration;

import java.util.List;
import org.rhumbatron.coordinator.project.ProjectStatus;
import org.rhumbatron.integration.IntegrationConsumer.Result;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.lifecycle.candidates.Candidates;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.projects.ProjectInfo;
import org.rhumbatron.lifecycle.projects.Projects;
import org.rhumbatron.lifecycle.workflow.WorkflowEngine;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.Queue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bounded commands: each handles {@code integration.rows-per-delivery} rows a delivery and
 * answers {@link Result#MORE_WORK} when more are left.
 */
final class IntegrationSweeps {
  private static final Logger log = LoggerFactory.getLogger(IntegrationSweeps.class);
  private final Lifecycle lifecycle;
  private final WorkflowEngine workflows;
  private final WorkflowStarts starts;
  private final Commands commands;
  private final Steps steps;
  private final int rowsPerDelivery;

  IntegrationSweeps(
      Lifecycle lifecycle,
      WorkflowEngine workflows,
      WorkflowStarts starts,
      Commands commands,
      Steps steps,
      int rowsPerDelivery) {
    this.lifecycle = lifecycle;
    this.workflows = workflows;
    this.starts = starts;
    this.commands = commands;
    this.steps = steps;
    this.rowsPerDelivery = rowsPerDelivery;
  }

  /** project.cleanup: cancels the open Changes of an archived or deleted Project. */
  Result cleanupProject(Command c) throws Exception {
    ProjectInfo project =
        lifecycle
            .projects()
            .project(c.projectId())
            .orElseThrow(() -> LifecycleException.unknownProject(c.projectId()));
    if (project.status() == ProjectStatus.ACTIVE) {
      log.info("project.cleanup {}: the project is active, nothing to clean up", c.projectId());
      return Result.DONE;
    }
    List<String> open = lifecycle.changes().openChanges(c.projectId(), rowsPerDelivery + 1);
    for (String changeId : bounded(open)) {
      endIfOpen(
          changeId,
          ChangeState.CANCELLED,
          EventType.CHANGE_CANCELLED,
          Projects.endReason(project.status()),
          c.commandId());
    }
    return more(open);
  }

  /**
   * candidates.recompose (after canonical.advanced): every open or verified Candidate of the
   * project on an earlier base goes stale, and a candidate.create recomposes it on the new base.
   */
  Result recompose(Command c) throws Exception {
    long generation = c.payload().path("generation").asLong(-1);
    if (generation < 1) {
      throw LifecycleException.payload(
          c.commandType().wireName(), c.commandId(), "lacks generation (1 or more)");
    }
    List<Candidates.CandidateOf> stale =
        lifecycle.candidates().candidatesBefore(c.projectId(), generation, rowsPerDelivery + 1);
    for (Candidates.CandidateOf candidate : bounded(stale)) {
      steps.await(lifecycle.approvals().stale(candidate.candidateId(), c.commandId()));
      steps.await(
          commands.sendTo(
              Queue.VERIFICATION,
              lifecycle
                  .commands()
                  .rebase(c.projectId(), candidate.changeId(), candidate.candidateId())));
    }
    return more(stale);
  }

  /**
   * forks.sweep: open variants whose sibling (or parent) was promoted become {@code not_selected},
   * and the open Candidates of variants not selected go stale.
   */
  Result sweepForks(Command c) throws Exception {
    List<String> forks = lifecycle.changes().forksNotSelected(rowsPerDelivery + 1);
    for (String changeId : bounded(forks)) {
      endIfOpen(
          changeId,
          ChangeState.NOT_SELECTED,
          EventType.CHANGE_NOT_SELECTED,
          "a sibling variant completed",
          c.commandId());
    }
    for (String candidateId : lifecycle.candidates().candidatesNotSelected(rowsPerDelivery)) {
      steps.await(lifecycle.approvals().stale(candidateId, c.commandId()));
    }
    return more(forks);
  }

  /**
   * release.recover for a Change still releasing {@code maintenance.release-recover-after} after
   * its promotion: a failed release Workflow runs again, one never started is started, one still
   * running is left to the engine.
   */
  Result recoverRelease(Command c) throws Exception {
    List<Candidates.Release> releases = lifecycle.candidates().openReleases(c.changeId());
    if (releases.isEmpty()) {
      log.warn("release.recover {}: change {} has no open release", c.commandId(), c.changeId());
    }
    for (Candidates.Release release : releases) {
      String releaseId = release.releaseId();
      var instance = workflows.instance(releaseId);
      if (instance.isEmpty()) {
        log.warn("release.recover: {} has no Workflow; starting it", releaseId);
        starts.sendOrStart(
            lifecycle.commands().releaseStart(c.projectId(), c.changeId(), releaseId));
      } else if (workflows.retryFailed(releaseId)) {
        log.warn(
            "release.recover: {} failed ({}); running it again",
            releaseId,
            release.state().dbName());
      } else {
        log.info("release.recover: {} is {}", releaseId, instance.get().state());
      }
    }
    return Result.DONE;
  }

  private <T> List<T> bounded(List<T> rows) {
    return rows.subList(0, Math.min(rows.size(), rowsPerDelivery));
  }

  private Result more(List<?> rows) {
    return rows.size() > rowsPerDelivery ? Result.MORE_WORK : Result.DONE;
  }

  /** Ends a Change a sweep found open; one that ended since (a race) is left as it is. */
  private void endIfOpen(
      String changeId, ChangeState state, EventType type, String reason, String causedBy)
      throws Exception {
    try {
      steps.await(lifecycle.ends().endChange(changeId, state, type, reason, causedBy));
    } catch (LifecycleException e) {
      log.info("{} stays as it is: {}", changeId, e.getMessage());
    }
  }
}
