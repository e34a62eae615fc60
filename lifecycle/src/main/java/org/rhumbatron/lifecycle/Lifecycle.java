package org.rhumbatron.lifecycle;

import java.time.Clock;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.coordinator.project.ProjectRootActor;
import org.rhumbatron.coordinator.project.ProjectStatus;
import org.rhumbatron.coordinator.shard.ShardAlarmWork;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.platform.queue.SendReceipt;
import org.rhumbatron.platform.secrets.SigningKeys;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.EventType;

/**
 * The one entry point of the Change lifecycle, for the HTTP API, the command handlers and the
 * Agents. Every state change runs on the actor that owns it ({@link LifecycleShards}), in one
 * transaction with its Events. The project and app commands go on the integration queue (the seed's
 * api → integration arrow) and their handlers call back here. Its reads are {@link
 * LifecycleReads}'s, documented there.
 *
 * <p>A Change <em>cannot move on its own</em> when it is open, none of its Tasks is assigned or
 * running, and not every Task is completed: nothing will write the next Event of its work graph.
 * That is what the maintenance sweep's change.settle is for ({@code maintenance.every-minutes}),
 * and what {@link #settle} resolves.
 */
public final class Lifecycle {
  private final ChangeCreation creation;
  private final LifecycleReads reads;
  private final LifecycleShards shards;
  private final LifecycleCommands commands;
  private final ChangeDispatcher dispatcher;
  private final ChangeEnds ends;
  private final LifecycleProjects projects;
  private final Approvals approvals;
  private final AgentReports agents;
  private final TaskTokens taskTokens;

  public Lifecycle(Coordinator coordinator, Commands commands, Clock clock, Settings settings) {
    this.reads = new LifecycleReads(coordinator.database());
    this.shards = new LifecycleShards(coordinator, reads);
    this.commands = new LifecycleCommands(commands, clock);
    this.dispatcher = new ChangeDispatcher(clock, settings);
    this.creation = new ChangeCreation(shards, reads, dispatcher, settings);
    ChangeSettler settler = new ChangeSettler(clock, settings, dispatcher);
    ResourceLedger resources = new ResourceLedger(clock, settings.get(Settings.CLAIM_TTL));
    this.ends = new ChangeEnds(shards, reads, settler, resources);
    this.projects =
        new LifecycleProjects(coordinator, shards, reads, ends, new ProjectLedger(clock));
    this.approvals =
        new Approvals(
            coordinator, commands, this.commands, shards, reads, ends, projects, settler, clock);
    this.agents =
        new AgentReports(shards, new TaskReports(clock), resources, new ModelRoutes(clock));
    this.taskTokens =
        new TaskTokens(
            new SigningKeys(coordinator.database(), clock),
            clock,
            settings.get(Settings.TASK_TOKEN_MAX_AGE),
            settings.get(Settings.TASK_TOKEN_KEY_ROTATION));
  }

  /** The signer and checker of the task tokens Agents report with. */
  public TaskTokens taskTokens() {
    return taskTokens;
  }

  /** The lifecycle's read API. */
  public LifecycleReads reads() {
    return reads;
  }

  /**
   * What starts a Workflow directly when its start command cannot be sent (the integration module
   * sets it: the seed's producer starts the Workflow directly only when the send fails).
   */
  public void whenWorkflowSendFails(Consumer<Command> startDirectly) {
    approvals.whenWorkflowSendFails(startDirectly);
  }

  /**
   * Who tells an Agent to stop when its Task was cancelled because its Change ended (the agents
   * module gives its runtime's stop): called with the Task's attempt and the end reason ({@code
   * change_failed}, ...) after the Change's end committed; it must not block.
   */
  public void whenTaskStops(BiConsumer<TaskRef, String> stop) {
    ends.whenTaskStops(stop);
  }

  /** What a shard's alarm does for the lifecycle (claim expiry); give it to the Coordinator. */
  public static ShardAlarmWork shardAlarmWork(Clock clock, Settings settings) {
    return new ResourceLedger(clock, settings.get(Settings.CLAIM_TTL));
  }

  // Projects -------------------------------------------------------------------------------------

  /** Sends {@code project.provision}; its handler creates the Project ({@link #createProject}). */
  public CompletableFuture<SendReceipt> provisionProject(
      String projectId, String tenantId, String name) {
    return commands.provisionProject(projectId, tenantId, name);
  }

  /** Sends {@code project.cleanup}: its handler cancels an archived Project's open Changes. */
  public CompletableFuture<SendReceipt> cleanupProject(String projectId) {
    return commands.oneOff(CommandType.PROJECT_CLEANUP, projectId);
  }

  /** Sends {@code app.provision}: its handler marks the Project as having a live app. */
  public CompletableFuture<SendReceipt> provisionApp(String projectId) {
    return commands.oneOff(CommandType.APP_PROVISION, projectId);
  }

  /** Sends {@code app.remove}. */
  public CompletableFuture<SendReceipt> removeApp(String projectId) {
    return commands.oneOff(CommandType.APP_REMOVE, projectId);
  }

  /**
   * active → archived: the Project takes no new Change, and its open Changes end {@code cancelled}
   * ({@code project_archived}); true when this call archived it. The future completes once they
   * ended; a repeat ends any that an interrupted call left open.
   */
  public CompletableFuture<Boolean> archiveProject(String projectId) {
    return projects.archive(projectId);
  }

  /** → deleted, its open Changes ended as by {@link #archiveProject}; true when it deleted it. */
  public CompletableFuture<Boolean> deleteProject(String projectId) {
    return projects.delete(projectId);
  }

  /** Why a Change of an archived or deleted Project ended: {@code project_<status>}. */
  public static String projectEndReason(ProjectStatus status) {
    return "project_" + status.dbName();
  }

  /**
   * Ends every open Change of an archived or deleted Project {@code cancelled} with {@link
   * #projectEndReason}, through {@link #endChange} (its Tasks cancelled, Agents stopped, claims
   * released); the number this call ended. Nothing for an active Project.
   */
  public CompletableFuture<Integer> endProjectChanges(String projectId, String causedBy) {
    return projects.endChanges(projectId, causedBy);
  }

  /** project.provision: the root creates the Project ({@code project.created}) once. */
  public CompletableFuture<Boolean> createProject(String projectId, String tenantId, String name) {
    return projects.create(projectId, tenantId, name);
  }

  /** app.provision / app.remove: true when the flag changed. */
  public CompletableFuture<Boolean> setLiveApp(String projectId, boolean live, String causedBy) {
    return projects.setLiveApp(projectId, live, causedBy);
  }

  public Optional<ProjectInfo> project(String projectId) {
    return reads.project(projectId);
  }

  public List<ProjectInfo> projects(String status, int limit) {
    return reads.projects(status, limit);
  }

  // Changes --------------------------------------------------------------------------------------

  /** {@link #createChange(String, String, String, WorkGraph)} without a title. */
  public CompletableFuture<ChangeCreated> createChange(
      String projectId, String clientRequestId, WorkGraph workGraph) {
    return createChange(projectId, clientRequestId, null, workGraph);
  }

  /**
   * Creates a Change with the Tasks of {@code workGraph} (all pending) and {@code change.created}
   * on the shard of {@code change:<id>}; the router's change.dispatch makes its root Tasks ready. A
   * repeat with the same {@code (projectId, clientRequestId)} returns the first Change.
   *
   * @throws WorkGraphException (at once) for a graph that is not a DAG of valid Tasks
   * @throws LifecycleException (in the future) for an unknown or archived Project
   */
  public CompletableFuture<ChangeCreated> createChange(
      String projectId, String clientRequestId, String title, WorkGraph workGraph) {
    return creation.create(projectId, clientRequestId, title, workGraph);
  }

  /**
   * Forks a variant of {@code parentChangeId}: a Change of the same Project with its own work
   * graph. When one variant is promoted its open siblings end {@code not_selected}; the daily
   * forks.sweep ends any it missed.
   */
  public CompletableFuture<ChangeCreated> forkChange(
      String parentChangeId, String clientRequestId, String title, WorkGraph workGraph) {
    return creation.fork(parentChangeId, clientRequestId, title, workGraph);
  }

  public List<String> openSiblings(String changeId) {
    return reads.openSiblings(changeId);
  }

  /** → cancelled ({@code change.cancelled}); false when it was cancelled already. */
  public CompletableFuture<Boolean> cancelChange(String changeId) {
    return endChange(changeId, ChangeState.CANCELLED, EventType.CHANGE_CANCELLED, null, null);
  }

  /**
   * Ends an open Change in {@code state} with {@code type}; false when it was there already. Its
   * Tasks that had not ended are cancelled in the same transaction; once it committed their Agents
   * are told to stop and the claims of its Tasks are released (the future completes after that).
   */
  public CompletableFuture<Boolean> endChange(
      String changeId, ChangeState state, EventType type, String reason, String causedBy) {
    return ends.endChange(changeId, state, type, reason, causedBy);
  }

  /** change.dispatch of {@code changeId}; the caller sends the returned wakes. */
  public CompletableFuture<Dispatched> dispatch(String changeId, String causedBy) {
    return shards.onChange(
        changeId,
        (tx, out, shard) -> dispatcher.dispatch(tx, out, shard.writerId(), changeId, causedBy));
  }

  /**
   * change.settle of {@code changeId}; the caller sends the wakes of its dispatch. When it fails
   * the Change, the Agents of its cancelled Tasks are stopped and its claims released first.
   */
  public CompletableFuture<Settled> settle(String changeId, String causedBy) {
    return ends.settle(changeId, causedBy);
  }

  /**
   * candidate.create: composes the verifying Change's Candidate on the current canonical
   * generation, or waits for a conflict review unless {@code composeAnyway} (the last delivery).
   */
  public CompletableFuture<Composition> composeCandidate(
      String changeId, String causedBy, boolean composeAnyway) {
    return approvals.compose(changeId, causedBy, composeAnyway);
  }

  /** The verifier's verdict on a Candidate; false for a repeat. */
  public CompletableFuture<Boolean> recordVerdict(
      String candidateId, boolean passed, String reason, String causedBy) {
    return approvals.recordVerdict(candidateId, passed, reason, causedBy);
  }

  /** The release Workflow's outcome for {@code releaseId}; false for a repeat. */
  public CompletableFuture<Boolean> recordRelease(
      String releaseId, boolean ok, String error, String causedBy) {
    return approvals.recordRelease(releaseId, ok, error, causedBy);
  }

  public boolean staleAwaitingRebase(String changeId, String candidateId) {
    return reads.staleAwaitingRebase(changeId, candidateId);
  }

  public Optional<String> pendingRelease(String changeId) {
    return reads.pendingRelease(changeId);
  }

  /**
   * {@code release.start} for a promoted generation with a live app: {@code cmd_<release>_release}.
   */
  public Command releaseStart(String projectId, String changeId, String releaseId) {
    return commands.releaseStart(projectId, changeId, releaseId);
  }

  /** What an approval decided, and the release to start (null: none). */
  public record Approval(ProjectRootActor.Promotion promotion, long generation, String releaseId) {}

  /**
   * Approves a Change awaiting approval: the root's {@code decidePromotion} of its verified
   * Candidate. Promoted (or promoted before): the Change completes, or with a live app is releasing
   * and {@code release.start} goes out. A stale base: the Candidate is stale, the Change verifying
   * again, and {@code candidate.create} goes to the verification queue (a rebase).
   */
  public CompletableFuture<Approval> approveChange(String changeId) {
    return approvals.approve(changeId);
  }

  /** Declines a Change awaiting approval: {@code declined}; false when it was declined already. */
  public CompletableFuture<Boolean> declineChange(String changeId) {
    return approvals.decline(changeId);
  }

  /**
   * candidates.recompose's step for one Candidate on an earlier base: {@code candidate.stale}, and
   * its Change back to verifying when it awaited approval with it; false when it was stale already.
   */
  public CompletableFuture<Boolean> staleCandidate(String candidateId, String causedBy) {
    return approvals.stale(candidateId, causedBy);
  }

  /**
   * The candidate.create that recomposes a Change on the new base after its Candidate went stale (a
   * rebase): {@code cmd_<candidate>_rebase}, sent to the verification queue.
   */
  public Command rebaseCommand(String projectId, String changeId, String staleCandidate) {
    return commands.rebase(projectId, changeId, staleCandidate);
  }

  /**
   * The candidate.create that change.settle {@code settleCommandId} sends again for a verifying
   * Change without a Candidate ({@link Settled.Decision#CANDIDATE_AGAIN}): {@code
   * <settleCommandId>_candidate}, so a redelivered settle sends the same command.
   */
  public Command candidateAgain(String projectId, String changeId, String settleCommandId) {
    return commands.candidateAgain(projectId, changeId, settleCommandId);
  }

  public Optional<ChangeInfo> change(String changeId) {
    return reads.change(changeId);
  }

  public List<ChangeInfo> changes(String projectId, String state, int limit) {
    return reads.changes(projectId, state, limit);
  }

  public List<TaskInfo> tasks(String changeId) {
    return reads.tasks(changeId);
  }

  public Optional<TaskInfo> task(String taskId) {
    return reads.task(taskId);
  }

  public List<TaskRef> heldTasks(int limit) {
    return reads.heldTasks(limit);
  }

  // Agents ---------------------------------------------------------------------------------------

  /** {@code agent.woken}: the wake {@code commandId} reached the Agent that holds the Task. */
  public CompletableFuture<Void> agentWoken(TaskRef ref, String commandId) {
    return agents.agentWoken(ref, commandId);
  }

  /** assigned → running ({@code task.running}). */
  public CompletableFuture<Void> startTask(TaskRef ref) {
    return agents.start(ref);
  }

  /** {@code intent.declared} on the shard of {@code key}. */
  public CompletableFuture<Void> declareIntent(TaskRef ref, String key) {
    return agents.declareIntent(ref, key);
  }

  /**
   * {@code claim.acquired} on the shard of {@code key}; it expires after {@code agents.claim-ttl}.
   */
  public CompletableFuture<Void> acquireClaim(TaskRef ref, String key) {
    return agents.acquireClaim(ref, key);
  }

  /** {@code claim.released} on the shard of {@code key}. */
  public CompletableFuture<Void> releaseClaim(TaskRef ref, String key) {
    return agents.releaseClaim(ref, key);
  }

  /** {@code changeset.proposed} for the Task's attempt; returns the changeset id. */
  public CompletableFuture<String> proposeChangeset(TaskRef ref) {
    return agents.proposeChangeset(ref);
  }

  /** running → completed ({@code task.completed}). */
  public CompletableFuture<Void> completeTask(TaskRef ref) {
    return agents.complete(ref);
  }

  /** → failed ({@code task.failed} with {@code error}). */
  public CompletableFuture<Void> failTask(TaskRef ref, String error) {
    return agents.fail(ref, error);
  }

  // Causal routing -------------------------------------------------------------------------------

  /**
   * Records a Clef-flash decision with its {@code model.routed} Event in the shard of the Change; a
   * repeat for the same Event and Task returns the first decision.
   */
  public CompletableFuture<ModelRouted> recordModelRoute(ModelRouted decision) {
    return agents.recordModelRoute(decision);
  }

  public Optional<ModelRouted> modelRoute(String eventId, String taskId) {
    return reads.modelRoute(eventId, taskId);
  }

  public List<ActiveScopes.Match> overlapping(
      String projectId, Collection<String> keys, String exceptAgent) {
    return reads.overlapping(projectId, keys, exceptAgent);
  }
}
