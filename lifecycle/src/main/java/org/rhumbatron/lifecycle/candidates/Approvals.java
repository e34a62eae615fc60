package org.rhumbatron.lifecycle.candidates;

import java.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.coordinator.project.ProjectRootActor;
import org.rhumbatron.lifecycle.LifecycleCommands;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.lifecycle.LifecycleShards;
import org.rhumbatron.lifecycle.changes.ChangeEnds;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.ChangeLedger;
import org.rhumbatron.lifecycle.changes.ChangeSettler;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.changes.Changes;
import org.rhumbatron.lifecycle.projects.Projects;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.Queue;

/**
 * A Change from its Candidate to its end: the Candidate composed, its verdict, the approval's
 * promotion by the root (or a rebase on a stale base), the decline, and the release's outcome.
 */
public final class Approvals {
  private final Coordinator coordinator;
  private final Commands commands;
  private final LifecycleCommands built;
  private final LifecycleShards shards;
  private final Changes changes;
  private final Candidates candidateReads;
  private final ChangeEnds ends;
  private final Projects projects;
  private final ChangeSettler settler;
  private final CandidateComposer composer;
  private final CandidateLedger candidates;
  private final ReleaseLedger releases;
  private volatile Consumer<Command> startDirectly = c -> {};

  public Approvals(
      Coordinator coordinator,
      Commands commands,
      LifecycleCommands built,
      LifecycleShards shards,
      Changes changes,
      Candidates candidateReads,
      ChangeEnds ends,
      Projects projects,
      ChangeSettler settler,
      Clock clock) {
    this.coordinator = coordinator;
    this.commands = commands;
    this.built = built;
    this.shards = shards;
    this.changes = changes;
    this.candidateReads = candidateReads;
    this.ends = ends;
    this.projects = projects;
    this.settler = settler;
    this.composer = new CandidateComposer(clock);
    this.candidates = new CandidateLedger(clock);
    this.releases = new ReleaseLedger(clock);
  }

  public void whenWorkflowSendFails(Consumer<Command> startDirectly) {
    this.startDirectly = startDirectly;
  }

  public CompletableFuture<Composition> compose(String changeId, String causedBy, boolean anyway) {
    return shards.onChange(
        changeId,
        (tx, out, shard) ->
            composer.compose(tx, out, shard.writerId(), changeId, causedBy, anyway));
  }

  public CompletableFuture<Boolean> recordVerdict(
      String candidateId, boolean passed, String reason, String causedBy) {
    return shards.onCandidate(
        candidateId,
        (tx, out, shard) ->
            candidates.recordVerdict(
                tx, out, shard.writerId(), candidateId, passed, reason, causedBy));
  }

  public CompletableFuture<Boolean> stale(String candidateId, String causedBy) {
    return shards.onCandidate(
        candidateId,
        (tx, out, shard) -> candidates.stale(tx, out, shard.writerId(), candidateId, causedBy));
  }

  public CompletableFuture<Boolean> recordRelease(
      String releaseId, boolean ok, String error, String causedBy) {
    return shards.onRelease(
        releaseId,
        (tx, out, shard) ->
            releases.recordRelease(tx, out, shard.writerId(), releaseId, ok, error, causedBy));
  }

  public CompletableFuture<Approval> approve(String changeId) {
    ChangeInfo change;
    CandidateLedger.Verified candidate;
    try {
      change = awaitingApproval(changeId, "approved");
      candidate =
          candidateReads
              .verifiedCandidate(changeId)
              .orElseThrow(
                  () ->
                      new LifecycleException(
                          "change " + changeId + " has no verified candidate", true));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    String candidateId = candidate.candidateId();
    String cause = "approve:" + candidateId;
    return coordinator
        .root(change.projectId())
        .decidePromotion(candidateId, candidate.baseGeneration(), changeId, cause)
        .thenCompose(
            decision ->
                switch (decision.promotion()) {
                  case PROJECT_NOT_ACTIVE -> endWithProject(change, cause);
                  case STALE_BASE -> rebase(change, candidateId, decision, cause);
                  default -> promoted(change, candidateId, decision, cause);
                });
  }

  /** Archived or deleted after the checks of {@link #approve}: the Change ends with the Project. */
  private CompletableFuture<Approval> endWithProject(ChangeInfo change, String cause) {
    String projectId = change.projectId();
    return projects
        .endChanges(projectId, cause)
        .thenCompose(
            ended ->
                CompletableFuture.failedFuture(
                    LifecycleException.projectNotActive(
                        projectId,
                        projects.project(projectId).map(p -> p.status().dbName()).orElse("gone"))));
  }

  private CompletableFuture<Approval> rebase(
      ChangeInfo change,
      String candidateId,
      ProjectRootActor.PromotionDecision decision,
      String cause) {
    String changeId = change.changeId();
    return shards
        .onChange(
            changeId,
            (tx, out, shard) -> candidates.stale(tx, out, shard.writerId(), candidateId, cause))
        .thenCompose(
            v ->
                commands.sendTo(
                    Queue.VERIFICATION, built.rebase(change.projectId(), changeId, candidateId)))
        .thenApply(v -> new Approval(decision.promotion(), decision.generation(), null));
  }

  private CompletableFuture<Approval> promoted(
      ChangeInfo change,
      String candidateId,
      ProjectRootActor.PromotionDecision decision,
      String cause) {
    String changeId = change.changeId();
    return shards
        .onChange(
            changeId,
            (tx, out, shard) ->
                releases.promoted(
                    tx, out, shard.writerId(), changeId, candidateId, decision.generation(), cause))
        .thenCompose(release -> endSiblings(changeId, cause).thenApply(v -> release))
        .thenCompose(
            release -> {
              var approval = new Approval(decision.promotion(), decision.generation(), release);
              if (release == null) {
                return CompletableFuture.completedFuture(approval);
              }
              Command start = built.releaseStart(change.projectId(), changeId, release);
              return commands
                  .send(start)
                  .handle(
                      (sent, error) -> {
                        if (error != null) {
                          startDirectly.accept(start);
                        }
                        return approval;
                      });
            });
  }

  /** A promoted variant's open siblings end {@code not_selected} (one that ended since stays). */
  private CompletableFuture<Void> endSiblings(String changeId, String cause) {
    CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
    for (String sibling : changes.openSiblings(changeId)) {
      chain =
          chain.thenCompose(
              v ->
                  ends.endChange(
                          sibling,
                          ChangeState.NOT_SELECTED,
                          EventType.CHANGE_NOT_SELECTED,
                          "sibling variant " + changeId + " was promoted",
                          cause)
                      .handle((ended, error) -> null));
    }
    return chain;
  }

  public CompletableFuture<Boolean> decline(String changeId) {
    return ends.afterEnd(
        changeId,
        shards.onChange(
            changeId,
            (tx, out, shard) -> {
              ChangeInfo c =
                  ChangeLedger.change(tx, changeId)
                      .orElseThrow(() -> LifecycleException.unknownChange(changeId));
              if (c.changeState() != ChangeState.DECLINED) {
                requireAwaitingApproval(c, "declined");
              }
              return settler.end(
                  tx,
                  out,
                  shard.writerId(),
                  changeId,
                  ChangeState.DECLINED,
                  EventType.CHANGE_DECLINED,
                  "declined at approval",
                  null);
            }));
  }

  private ChangeInfo awaitingApproval(String changeId, String verb) {
    ChangeInfo change =
        changes.change(changeId).orElseThrow(() -> LifecycleException.unknownChange(changeId));
    requireAwaitingApproval(change, verb);
    return change;
  }

  private static void requireAwaitingApproval(ChangeInfo change, String verb) {
    if (change.changeState() != ChangeState.AWAITING_APPROVAL) {
      throw new LifecycleException(
          "change "
              + change.changeId()
              + " is "
              + change.state()
              + ": only a Change awaiting approval can be "
              + verb,
          true);
    }
  }
}
