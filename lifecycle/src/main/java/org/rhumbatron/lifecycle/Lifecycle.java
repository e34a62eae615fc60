package org.rhumbatron.lifecycle;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.function.BiConsumer;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.coordinator.outbox.OutboxActor.Appender;
import org.rhumbatron.coordinator.outbox.OutboxActor.EventWork;
import org.rhumbatron.coordinator.project.ProjectRootActor;
import org.rhumbatron.coordinator.shard.ResourceShardActor;
import org.rhumbatron.coordinator.shard.ShardAlarmWork;
import org.rhumbatron.platform.concurrent.DaemonThreads;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.platform.queue.SendReceipt;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.protocol.StableIds;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one entry point of the Change lifecycle, for the HTTP API, the command handlers and the
 * Agents. Every state change runs on the actor that owns it, in one transaction with its Events:
 * the shard of {@code change:<id>} for a Change and its Tasks, the shard of a resource key for its
 * intents and claims, the shard of {@code project:<id>} for a Project's flags, the root for {@code
 * project.created}. The project and app commands go on the integration queue (the seed's api →
 * integration arrow) and their handlers call back here.
 *
 * <p>A Change <em>cannot move on its own</em> when it is open, none of its Tasks is assigned or
 * running, and not every Task is completed: nothing will write the next Event of its work graph.
 * That is what the 5-minute sweep's change.settle is for, and what {@link #settle} resolves.
 */
public final class Lifecycle {
  private static final Logger log = LoggerFactory.getLogger(Lifecycle.class);
  private final Coordinator coordinator;
  private final Database database;
  private final Commands commands;
  private final Clock clock;
  private final Settings settings;
  private final ChangeDispatcher dispatcher;
  private final ChangeSettler settler;
  private final TaskReports reports;
  private final ProjectLedger projects;
  private final ResourceLedger resources;
  private final CandidateLedger candidates;
  private final ModelRoutes modelRoutes;
  private volatile java.util.function.Consumer<Command> startDirectly = c -> {};
  private volatile BiConsumer<TaskRef, String> taskStops = (task, reason) -> {};
  // What follows a Change's end (the stop calls, the claims' release) runs here: futures of the
  // shards complete on the database's commit thread, which must not block.
  private final Executor afterEnd =
      Executors.newCachedThreadPool(DaemonThreads.named("change-end"));

  public Lifecycle(Coordinator coordinator, Commands commands, Clock clock, Settings settings) {
    this.coordinator = coordinator;
    this.database = coordinator.database();
    this.commands = commands;
    this.clock = clock;
    this.settings = settings;
    this.dispatcher = new ChangeDispatcher(clock, settings);
    this.settler = new ChangeSettler(clock, settings, dispatcher);
    this.reports = new TaskReports(clock);
    this.projects = new ProjectLedger(clock);
    this.resources = new ResourceLedger(clock, settings.get(Settings.CLAIM_TTL));
    this.modelRoutes = new ModelRoutes(clock);
    this.candidates = new CandidateLedger(clock);
  }

  /**
   * What starts a Workflow directly when its start command cannot be sent (the integration module
   * sets it: the seed's producer starts the Workflow directly only when the send fails).
   */
  public void whenWorkflowSendFails(java.util.function.Consumer<Command> startDirectly) {
    this.startDirectly = startDirectly;
  }

  /**
   * Who tells an Agent to stop when its Task was cancelled because its Change ended (the agents
   * module gives its runtime's stop): called with the Task's attempt and the end reason ({@code
   * change_failed}, ...) after the Change's end committed; it must not block.
   */
  public void whenTaskStops(BiConsumer<TaskRef, String> stop) {
    this.taskStops = stop;
  }

  /** What a shard's alarm does for the lifecycle (claim expiry); give it to the Coordinator. */
  public static ShardAlarmWork shardAlarmWork(Clock clock, Settings settings) {
    return new ResourceLedger(clock, settings.get(Settings.CLAIM_TTL));
  }

  // Projects (API) -------------------------------------------------------------------------------

  /** Sends {@code project.provision}; its handler creates the Project ({@link #createProject}). */
  public CompletableFuture<SendReceipt> provisionProject(
      String projectId, String tenantId, String name) {
    ObjectNode payload = ChangeLedger.payload();
    payload.put("tenantId", tenantId);
    payload.put("name", name);
    return commands.send(
        command(
            "cmd_project.provision_" + projectId,
            CommandType.PROJECT_PROVISION,
            projectId,
            payload));
  }

  /** Sends {@code project.cleanup}: its handler cancels an archived Project's open Changes. */
  public CompletableFuture<SendReceipt> cleanupProject(String projectId) {
    return commands.send(
        command(oneOff(), CommandType.PROJECT_CLEANUP, projectId, ChangeLedger.payload()));
  }

  /** Sends {@code app.provision}: its handler marks the Project as having a live app. */
  public CompletableFuture<SendReceipt> provisionApp(String projectId) {
    return commands.send(
        command(oneOff(), CommandType.APP_PROVISION, projectId, ChangeLedger.payload()));
  }

  /** Sends {@code app.remove}. */
  public CompletableFuture<SendReceipt> removeApp(String projectId) {
    return commands.send(
        command(oneOff(), CommandType.APP_REMOVE, projectId, ChangeLedger.payload()));
  }

  /**
   * active → archived: the Project takes no new Change, and its open Changes end {@code cancelled}
   * ({@code project_archived}); true when this call archived it. The future completes once they
   * ended; a repeat ends any that an interrupted call left open.
   */
  public CompletableFuture<Boolean> archiveProject(String projectId) {
    return onProjectShard(
            projectId, (tx, out, shard) -> projects.archive(tx, out, shard.writerId(), projectId))
        .thenCompose(changed -> endProjectChanges(projectId, null).thenApply(ended -> changed));
  }

  /** → deleted, its open Changes ended as by {@link #archiveProject}; true when it deleted it. */
  public CompletableFuture<Boolean> deleteProject(String projectId) {
    return onProjectShard(
            projectId, (tx, out, shard) -> projects.delete(tx, out, shard.writerId(), projectId))
        .thenCompose(changed -> endProjectChanges(projectId, null).thenApply(ended -> changed));
  }

  /** Why a Change of an archived or deleted Project ended: {@code project_<status>}. */
  public static String projectEndReason(String status) {
    return "project_" + status;
  }

  /**
   * Ends every open Change of an archived or deleted Project {@code cancelled} with {@link
   * #projectEndReason}, through {@link #endChange} (its Tasks cancelled, Agents stopped, claims
   * released); the number this call ended. Nothing for an active Project.
   */
  public CompletableFuture<Integer> endProjectChanges(String projectId, String causedBy) {
    Optional<ProjectInfo> project;
    List<String> open;
    try {
      project = project(projectId);
      if (project.isEmpty() || "active".equals(project.get().status())) {
        return CompletableFuture.completedFuture(0);
      }
      open =
          database.read(
              tx ->
                  tx.query(
                      "SELECT change_id FROM changes WHERE project_id = ? AND state IN ("
                          + StoredStates.placeholders(ChangeState.OPEN_STATES)
                          + ") ORDER BY created_at_ms, change_id",
                      rs -> rs.getString(1),
                      withOpenStates(projectId)));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    String reason = projectEndReason(project.get().status());
    List<CompletableFuture<Boolean>> ends =
        open.stream().map(id -> endProjectChange(id, reason, causedBy)).toList();
    return CompletableFuture.allOf(ends.toArray(CompletableFuture[]::new))
        .thenApply(v -> (int) ends.stream().filter(CompletableFuture::join).count());
  }

  /** Ends one Change of an ended Project; false when it had ended meanwhile in another way. */
  private CompletableFuture<Boolean> endProjectChange(
      String changeId, String reason, String causedBy) {
    return endChange(changeId, ChangeState.CANCELLED, EventType.CHANGE_CANCELLED, reason, causedBy)
        .exceptionallyCompose(
            e ->
                unwrap(e) instanceof LifecycleException le && le.permanent()
                    ? CompletableFuture.completedFuture(false)
                    : CompletableFuture.failedFuture(e));
  }

  private static Throwable unwrap(Throwable e) {
    while (e instanceof java.util.concurrent.CompletionException && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }

  // Projects (handlers) --------------------------------------------------------------------------

  /** project.provision: the root creates the Project ({@code project.created}) once. */
  public CompletableFuture<Boolean> createProject(String projectId, String tenantId, String name) {
    return coordinator.root(projectId).createProject(tenantId, name);
  }

  /** app.provision / app.remove: true when the flag changed. */
  public CompletableFuture<Boolean> setLiveApp(String projectId, boolean live, String causedBy) {
    return onProjectShard(
        projectId,
        (tx, out, shard) ->
            projects.setLiveApp(tx, out, shard.writerId(), projectId, live, causedBy));
  }

  public Optional<ProjectInfo> project(String projectId) {
    return database.read(tx -> ProjectLedger.project(tx, projectId));
  }

  /** At most {@code limit} Projects in id order; all statuses when {@code status} is null. */
  public List<ProjectInfo> projects(String status, int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, got " + limit);
    }
    return database.read(tx -> ProjectLedger.projects(tx, status, limit));
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
    if (clientRequestId == null || clientRequestId.isBlank()) {
      throw new LifecycleException("a Change needs a client request id", true);
    }
    workGraph.validate(settings.get(Settings.TASKS_PER_CHANGE_MAX));
    String changeId = LifecycleIds.changeId(projectId, clientRequestId);
    ResourceShardActor shard = changeShard(projectId, changeId);
    return shard.change(
        (tx, out) ->
            dispatcher.create(
                tx, out, shard.writerId(), projectId, clientRequestId, title, null, workGraph));
  }

  /**
   * Forks a variant of {@code parentChangeId}: a Change of the same Project with its own work
   * graph. When one variant is promoted its open siblings end {@code not_selected}; the daily
   * forks.sweep ends any it missed.
   */
  public CompletableFuture<ChangeCreated> forkChange(
      String parentChangeId, String clientRequestId, String title, WorkGraph workGraph) {
    ChangeInfo parent;
    try {
      parent =
          change(parentChangeId)
              .orElseThrow(() -> LifecycleException.unknownChange(parentChangeId));
      if (clientRequestId == null || clientRequestId.isBlank()) {
        throw new LifecycleException("a Change needs a client request id", true);
      }
      workGraph.validate(settings.get(Settings.TASKS_PER_CHANGE_MAX));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    String projectId = parent.projectId();
    String changeId = LifecycleIds.changeId(projectId, clientRequestId);
    ResourceShardActor shard = changeShard(projectId, changeId);
    return shard.change(
        (tx, out) ->
            dispatcher.create(
                tx,
                out,
                shard.writerId(),
                projectId,
                clientRequestId,
                title,
                parentChangeId,
                workGraph));
  }

  /** The open fork siblings of {@code changeId} (other variants of its parent). */
  public List<String> openSiblings(String changeId) {
    return database.read(
        tx ->
            tx.query(
                "SELECT s.change_id FROM changes c JOIN changes s"
                    + " ON s.parent_change_id = c.parent_change_id AND s.change_id <> c.change_id"
                    + " WHERE c.change_id = ? AND s.state IN ("
                    + StoredStates.placeholders(ChangeState.OPEN_STATES)
                    + ") ORDER BY s.created_at_ms, s.change_id",
                rs -> rs.getString(1),
                withOpenStates(changeId)));
  }

  /** {@code first}, then the stored names of {@link ChangeState#OPEN_STATES}: query parameters. */
  private static Object[] withOpenStates(String first) {
    List<Object> args = new ArrayList<>();
    args.add(first);
    args.addAll(StoredStates.dbNames(ChangeState.OPEN_STATES));
    return args.toArray();
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
    return afterEnd(
        changeId,
        onChangeShard(
            changeId,
            (tx, out, shard) ->
                settler.end(tx, out, shard.writerId(), changeId, state, type, reason, causedBy)));
  }

  private CompletableFuture<Boolean> afterEnd(
      String changeId, CompletableFuture<ChangeSettler.Ended> ended) {
    return ended.thenComposeAsync(
        e -> stopAndRelease(changeId, e.reason(), e.stopped()).thenApply(v -> e.changed()),
        afterEnd);
  }

  /**
   * After a Change ended: tells the Agents of its cancelled Tasks to stop, and releases every claim
   * its Tasks still hold ({@code claim.released}, each on the shard of its key). A repeated end
   * releases what an interrupted one left; the claims' expiry is the backstop after a crash.
   */
  private CompletableFuture<Void> stopAndRelease(
      String changeId, String reason, List<TaskRef> stopped) {
    for (TaskRef task : stopped) {
      try {
        taskStops.accept(task, reason);
      } catch (RuntimeException e) {
        log.warn("could not tell agent {} to stop task {}: {}", task.agentId(), task.taskId(), e);
      }
    }
    List<ResourceLedger.HeldClaim> held =
        database.read(tx -> ResourceLedger.heldClaims(tx, changeId));
    CompletableFuture<?>[] releases =
        held.stream()
            .map(
                c ->
                    onResourceShard(
                        c.ref().projectId(),
                        c.key(),
                        (tx, out, shard) -> {
                          resources.releaseClaim(tx, out, shard, c.ref(), c.key());
                          return null;
                        }))
            .toArray(CompletableFuture[]::new);
    return CompletableFuture.allOf(releases);
  }

  /** change.dispatch of {@code changeId}; the caller sends the returned wakes. */
  public CompletableFuture<Dispatched> dispatch(String changeId, String causedBy) {
    return onChangeShard(
        changeId,
        (tx, out, shard) -> dispatcher.dispatch(tx, out, shard.writerId(), changeId, causedBy));
  }

  /**
   * change.settle of {@code changeId}; the caller sends the wakes of its dispatch. When it fails
   * the Change, the Agents of its cancelled Tasks are stopped and its claims released first.
   */
  public CompletableFuture<Settled> settle(String changeId, String causedBy) {
    return onChangeShard(
            changeId,
            (tx, out, shard) -> settler.settle(tx, out, shard.writerId(), changeId, causedBy))
        .thenCompose(
            s ->
                s.decision() != Settled.Decision.FAILED
                    ? CompletableFuture.completedFuture(s)
                    : CompletableFuture.supplyAsync(
                            () ->
                                stopAndRelease(
                                    changeId, ChangeState.FAILED.taskEndReason(), s.stopped()),
                            afterEnd)
                        .thenCompose(v -> v)
                        .thenApply(v -> s));
  }

  /**
   * candidate.create: composes the verifying Change's Candidate on the current canonical
   * generation, or waits for a conflict review unless {@code composeAnyway} (the last delivery).
   */
  public CompletableFuture<Composition> composeCandidate(
      String changeId, String causedBy, boolean composeAnyway) {
    return onChangeShard(
        changeId,
        (tx, out, shard) ->
            candidates.compose(tx, out, shard.writerId(), changeId, causedBy, composeAnyway));
  }

  /** The verifier's verdict on a Candidate; false for a repeat. */
  public CompletableFuture<Boolean> recordVerdict(
      String candidateId, boolean passed, String reason, String causedBy) {
    return onCandidateShard(
        candidateId,
        (tx, out, shard) ->
            candidates.recordVerdict(
                tx, out, shard.writerId(), candidateId, passed, reason, causedBy));
  }

  /** The release Workflow's outcome for {@code releaseId}; false for a repeat. */
  public CompletableFuture<Boolean> recordRelease(
      String releaseId, boolean ok, String error, String causedBy) {
    Optional<String> changeId =
        database.read(
            tx ->
                tx.queryFirst(
                    "SELECT change_id FROM releases WHERE release_id = ?",
                    rs -> rs.getString(1),
                    releaseId));
    if (changeId.isEmpty()) {
      return CompletableFuture.failedFuture(
          new LifecycleException("unknown release " + releaseId, true));
    }
    return onChangeShard(
        changeId.get(),
        (tx, out, shard) ->
            candidates.recordRelease(tx, out, shard.writerId(), releaseId, ok, error, causedBy));
  }

  /** The release of a releasing Change that has not started yet, if any. */
  /**
   * Whether {@code candidateId} of the verifying Change went stale and no later Candidate of the
   * Change exists: its rebase ({@link #rebaseCommand}) has not composed one yet, or never went out.
   */
  public boolean staleAwaitingRebase(String changeId, String candidateId) {
    return database.read(
        tx ->
            tx.queryLong(
                    "SELECT COUNT(*) FROM changes ch JOIN candidates c ON c.change_id ="
                        + " ch.change_id WHERE ch.change_id = ? AND ch.state = ?"
                        + " AND c.candidate_id = ? AND c.state = ? AND NOT EXISTS (SELECT 1"
                        + " FROM candidates n WHERE n.change_id = ch.change_id AND n.state <> ?)",
                    changeId,
                    ChangeState.VERIFYING.dbName(),
                    candidateId,
                    CandidateState.STALE.dbName(),
                    CandidateState.STALE.dbName())
                > 0);
  }

  public Optional<String> pendingRelease(String changeId) {
    return database.read(
        tx ->
            tx.queryFirst(
                "SELECT release_id FROM releases WHERE change_id = ? AND state = 'pending'"
                    + " ORDER BY generation DESC",
                rs -> rs.getString(1),
                changeId));
  }

  /**
   * {@code release.start} for a promoted generation with a live app: {@code cmd_<release>_release}.
   */
  public Command releaseStart(String projectId, String changeId, String releaseId) {
    ObjectNode payload = ChangeLedger.payload();
    payload.put("releaseId", releaseId);
    return Command.builder()
        .commandId(StableIds.release(releaseId))
        .commandType(CommandType.RELEASE_START)
        .projectId(projectId)
        .changeId(changeId)
        .createdAt(clock.instant())
        .payload(payload)
        .build();
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
    ChangeInfo change;
    CandidateLedger.Verified candidate;
    try {
      change = change(changeId).orElseThrow(() -> LifecycleException.unknownChange(changeId));
      if (change.changeState() != ChangeState.AWAITING_APPROVAL) {
        throw new LifecycleException(
            "change "
                + changeId
                + " is "
                + change.state()
                + ": only a Change awaiting approval"
                + " can be approved",
            true);
      }
      candidate =
          database
              .read(tx -> CandidateLedger.verifiedCandidate(tx, changeId))
              .orElseThrow(
                  () ->
                      new LifecycleException(
                          "change " + changeId + " has no verified candidate", true));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    String candidateId = candidate.candidateId();
    long base = candidate.baseGeneration();
    String cause = "approve:" + candidateId;
    return coordinator
        .root(change.projectId())
        .decidePromotion(candidateId, base, changeId, cause)
        .thenCompose(
            decision -> {
              if (decision.promotion() == ProjectRootActor.Promotion.PROJECT_NOT_ACTIVE) {
                // Archived or deleted after the checks above: the Change ends with the Project.
                return endProjectChanges(change.projectId(), cause)
                    .thenCompose(
                        ended ->
                            CompletableFuture.<Approval>failedFuture(
                                LifecycleException.projectNotActive(
                                    change.projectId(),
                                    project(change.projectId())
                                        .map(ProjectInfo::status)
                                        .orElse("gone"))));
              }
              if (decision.promotion() == ProjectRootActor.Promotion.STALE_BASE) {
                return onChangeShard(
                        changeId,
                        (tx, out, shard) ->
                            candidates.stale(tx, out, shard.writerId(), candidateId, cause))
                    .thenCompose(
                        v ->
                            commands.sendTo(
                                Queue.VERIFICATION,
                                rebaseCommand(change.projectId(), changeId, candidateId)))
                    .thenApply(
                        v -> new Approval(decision.promotion(), decision.generation(), null));
              }
              return onChangeShard(
                      changeId,
                      (tx, out, shard) ->
                          candidates.promoted(
                              tx,
                              out,
                              shard.writerId(),
                              changeId,
                              candidateId,
                              decision.generation(),
                              cause))
                  .thenCompose(release -> endSiblings(changeId, cause).thenApply(v -> release))
                  .thenCompose(
                      release -> {
                        Approval approval =
                            new Approval(decision.promotion(), decision.generation(), release);
                        if (release == null) {
                          return CompletableFuture.completedFuture(approval);
                        }
                        Command start = releaseStart(change.projectId(), changeId, release);
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
            });
  }

  /** A promoted variant's open siblings end {@code not_selected} (one that ended since stays). */
  private CompletableFuture<Void> endSiblings(String changeId, String cause) {
    CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
    for (String sibling : openSiblings(changeId)) {
      chain =
          chain.thenCompose(
              v ->
                  endChange(
                          sibling,
                          ChangeState.NOT_SELECTED,
                          EventType.CHANGE_NOT_SELECTED,
                          "sibling variant " + changeId + " was promoted",
                          cause)
                      .handle((ended, error) -> null));
    }
    return chain;
  }

  /** Declines a Change awaiting approval: {@code declined}; false when it was declined already. */
  public CompletableFuture<Boolean> declineChange(String changeId) {
    return afterEnd(
        changeId,
        onChangeShard(
            changeId,
            (tx, out, shard) -> {
              ChangeInfo c =
                  ChangeLedger.change(tx, changeId)
                      .orElseThrow(() -> LifecycleException.unknownChange(changeId));
              if (c.changeState() != ChangeState.AWAITING_APPROVAL
                  && c.changeState() != ChangeState.DECLINED) {
                throw new LifecycleException(
                    "change "
                        + changeId
                        + " is "
                        + c.state()
                        + ": only a Change awaiting approval"
                        + " can be declined",
                    true);
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

  /**
   * candidates.recompose's step for one Candidate on an earlier base: {@code candidate.stale}, and
   * its Change back to verifying when it awaited approval with it; false when it was stale already.
   */
  public CompletableFuture<Boolean> staleCandidate(String candidateId, String causedBy) {
    return onCandidateShard(
        candidateId,
        (tx, out, shard) -> candidates.stale(tx, out, shard.writerId(), candidateId, causedBy));
  }

  /**
   * The candidate.create that recomposes a Change on the new base after its Candidate went stale (a
   * rebase): {@code cmd_<candidate>_rebase}, sent to the verification queue.
   */
  public Command rebaseCommand(String projectId, String changeId, String staleCandidate) {
    ObjectNode payload = ChangeLedger.payload();
    payload.put("staleCandidateId", staleCandidate);
    return Command.builder()
        .commandId("cmd_" + staleCandidate + "_rebase")
        .commandType(CommandType.CANDIDATE_CREATE)
        .projectId(projectId)
        .changeId(changeId)
        .createdAt(clock.instant())
        .payload(payload)
        .build();
  }

  /**
   * The candidate.create that change.settle {@code settleCommandId} sends again for a verifying
   * Change without a Candidate ({@link Settled.Decision#CANDIDATE_AGAIN}): {@code
   * <settleCommandId>_candidate}, so a redelivered settle sends the same command.
   */
  public Command candidateAgain(String projectId, String changeId, String settleCommandId) {
    ObjectNode payload = ChangeLedger.payload();
    payload.put("reason", "candidate_missing");
    return Command.builder()
        .commandId(settleCommandId + "_candidate")
        .commandType(CommandType.CANDIDATE_CREATE)
        .projectId(projectId)
        .changeId(changeId)
        .createdAt(clock.instant())
        .payload(payload)
        .build();
  }

  public Optional<ChangeInfo> change(String changeId) {
    return database.read(tx -> ChangeLedger.change(tx, changeId));
  }

  /** The Changes of a project, oldest first, only those in {@code state} unless it is null. */
  public List<ChangeInfo> changes(String projectId, String state, int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, got " + limit);
    }
    return database.read(tx -> ChangeLedger.changes(tx, projectId, state, limit));
  }

  public List<TaskInfo> tasks(String changeId) {
    return database.read(tx -> ChangeLedger.tasks(tx, changeId));
  }

  public Optional<TaskInfo> task(String taskId) {
    return database.read(tx -> ChangeLedger.task(tx, taskId));
  }

  /** Tasks an Agent holds (assigned or running) in open Changes, at most {@code limit}. */
  public List<TaskRef> heldTasks(int limit) {
    return database.read(
        tx ->
            tx.query(
                "SELECT t.project_id, t.change_id, t.task_id, t.agent_id, t.attempts FROM tasks t"
                    + " JOIN changes c ON c.change_id = t.change_id"
                    + " WHERE t.state IN (?, ?) AND c.state = ?"
                    + " ORDER BY t.change_id, t.position LIMIT "
                    + limit,
                rs ->
                    new TaskRef(
                        rs.getString(1),
                        rs.getString(2),
                        rs.getString(3),
                        rs.getString(4),
                        rs.getInt(5)),
                TaskState.ASSIGNED.dbName(),
                TaskState.RUNNING.dbName(),
                ChangeState.OPEN.dbName()));
  }

  // Agents ---------------------------------------------------------------------------------------

  /** {@code agent.woken}: the wake {@code commandId} reached the Agent that holds the Task. */
  public CompletableFuture<Void> agentWoken(TaskRef ref, String commandId) {
    return onTaskShard(
        ref,
        (tx, out, shard) -> {
          reports.agentWoken(tx, out, shard.writerId(), ref, commandId);
          return null;
        });
  }

  /** assigned → running ({@code task.running}). */
  public CompletableFuture<Void> startTask(TaskRef ref) {
    return onTaskShard(
        ref,
        (tx, out, shard) -> {
          reports.start(tx, out, shard.writerId(), ref);
          return null;
        });
  }

  /** {@code intent.declared} on the shard of {@code key}. */
  public CompletableFuture<Void> declareIntent(TaskRef ref, String key) {
    return onResourceShard(
        ref.projectId(),
        key,
        (tx, out, shard) -> {
          resources.declareIntent(tx, out, shard, ref, key);
          return null;
        });
  }

  /**
   * {@code claim.acquired} on the shard of {@code key}; it expires after {@code agents.claim-ttl}.
   */
  public CompletableFuture<Void> acquireClaim(TaskRef ref, String key) {
    return onResourceShard(
        ref.projectId(),
        key,
        (tx, out, shard) -> {
          resources.acquireClaim(tx, out, shard, ref, key);
          return null;
        });
  }

  /** {@code claim.released} on the shard of {@code key}. */
  public CompletableFuture<Void> releaseClaim(TaskRef ref, String key) {
    return onResourceShard(
        ref.projectId(),
        key,
        (tx, out, shard) -> {
          resources.releaseClaim(tx, out, shard, ref, key);
          return null;
        });
  }

  /** {@code changeset.proposed} for the Task's attempt; returns the changeset id. */
  public CompletableFuture<String> proposeChangeset(TaskRef ref) {
    return onTaskShard(
        ref, (tx, out, shard) -> reports.proposeChangeset(tx, out, shard.writerId(), ref));
  }

  /** running → completed ({@code task.completed}). */
  public CompletableFuture<Void> completeTask(TaskRef ref) {
    return onTaskShard(
        ref,
        (tx, out, shard) -> {
          reports.complete(tx, out, shard.writerId(), ref);
          return null;
        });
  }

  /** → failed ({@code task.failed} with {@code error}). */
  public CompletableFuture<Void> failTask(TaskRef ref, String error) {
    return onTaskShard(
        ref,
        (tx, out, shard) -> {
          reports.fail(tx, out, shard.writerId(), ref, error);
          return null;
        });
  }

  // Causal routing -------------------------------------------------------------------------------

  /**
   * Records a Clef-flash decision with its {@code model.routed} Event in the shard of the Change; a
   * repeat for the same Event and Task returns the first decision.
   */
  public CompletableFuture<ModelRouted> recordModelRoute(ModelRouted decision) {
    return on(
        changeShard(decision.projectId(), decision.changeId()),
        (tx, out, shard) -> modelRoutes.record(tx, out, shard.writerId(), decision));
  }

  /** The Clef-flash decision already recorded for the Agent of {@code taskId} and the Event. */
  public Optional<ModelRouted> modelRoute(String eventId, String taskId) {
    return database.read(tx -> ModelRoutes.find(tx, eventId, taskId));
  }

  /**
   * The active Agents of the project whose scopes overlap {@code keys} (see {@link ActiveScopes}),
   * read outside any write transaction.
   */
  public List<ActiveScopes.Match> overlapping(
      String projectId, java.util.Collection<String> keys, String exceptAgent) {
    return database.read(tx -> ActiveScopes.overlapping(tx, projectId, keys, exceptAgent));
  }

  // Actors ---------------------------------------------------------------------------------------

  /** A state change on a shard, with the shard at hand (for its writer id and alarm). */
  @FunctionalInterface
  interface ShardWork<T> {
    T run(Tx tx, Appender out, ResourceShardActor shard) throws SQLException;
  }

  private <T> CompletableFuture<T> on(ResourceShardActor shard, ShardWork<T> work) {
    EventWork<T> body = (tx, out) -> work.run(tx, out, shard);
    return shard.change(body);
  }

  private ResourceShardActor changeShard(String projectId, String changeId) {
    return coordinator.changeEvents().shardFor(projectId, "change:" + changeId);
  }

  private <T> CompletableFuture<T> onChangeShard(String changeId, ShardWork<T> work) {
    String projectId;
    try {
      projectId =
          change(changeId)
              .map(ChangeInfo::projectId)
              .orElseThrow(() -> LifecycleException.unknownChange(changeId));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return on(changeShard(projectId, changeId), work);
  }

  private <T> CompletableFuture<T> onCandidateShard(String candidateId, ShardWork<T> work) {
    Optional<String> changeId =
        database.read(
            tx ->
                tx.queryFirst(
                    "SELECT change_id FROM candidates WHERE candidate_id = ?",
                    rs -> rs.getString(1),
                    candidateId));
    if (changeId.isEmpty()) {
      return CompletableFuture.failedFuture(
          new LifecycleException("unknown candidate " + candidateId, true));
    }
    return onChangeShard(changeId.get(), work);
  }

  private <T> CompletableFuture<T> onTaskShard(TaskRef ref, ShardWork<T> work) {
    return on(changeShard(ref.projectId(), ref.changeId()), work);
  }

  private <T> CompletableFuture<T> onResourceShard(
      String projectId, String key, ShardWork<T> work) {
    return on(coordinator.changeEvents().shardFor(projectId, key), work);
  }

  private <T> CompletableFuture<T> onProjectShard(String projectId, ShardWork<T> work) {
    return onResourceShard(projectId, "project:" + projectId, work);
  }

  private Command command(String id, CommandType type, String projectId, ObjectNode payload) {
    return Command.builder()
        .commandId(id)
        .commandType(type)
        .projectId(projectId)
        .createdAt(clock.instant())
        .payload(payload)
        .build();
  }

  /**
   * An id for an operator's one-off command, which a later one of the same kind must not repeat.
   */
  private static String oneOff() {
    return StableIds.randomCommandId(UUID::randomUUID);
  }
}
