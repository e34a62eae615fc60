package org.rhumbatron.lifecycle.changes;

import java.util.concurrent.CompletableFuture;
import org.rhumbatron.coordinator.shard.ResourceShardActor;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.lifecycle.LifecycleIds;
import org.rhumbatron.lifecycle.LifecycleReads;
import org.rhumbatron.lifecycle.LifecycleShards;
import org.rhumbatron.platform.config.Settings;

/**
 * The entry point of the Change aggregate: a new Change or fork variant, and change.dispatch, each
 * on the shard of {@code change:<id>}. Its end and change.settle are {@link ChangeEnds}'s.
 */
public final class Changes {
  private final LifecycleShards shards;
  private final LifecycleReads reads;
  private final ChangeDispatcher dispatcher;
  private final int tasksMax;

  public Changes(
      LifecycleShards shards,
      LifecycleReads reads,
      ChangeDispatcher dispatcher,
      Settings settings) {
    this.shards = shards;
    this.reads = reads;
    this.dispatcher = dispatcher;
    this.tasksMax = settings.get(Settings.TASKS_PER_CHANGE_MAX);
  }

  /** {@link #create(String, String, String, WorkGraph)} without a title. */
  public CompletableFuture<ChangeCreated> create(
      String projectId, String clientRequestId, WorkGraph workGraph) {
    return create(projectId, clientRequestId, null, workGraph);
  }

  /**
   * Creates a Change with the Tasks of {@code workGraph} (all pending) and {@code change.created}
   * on the shard of {@code change:<id>}; the router's change.dispatch makes its root Tasks ready. A
   * repeat with the same {@code (projectId, clientRequestId)} returns the first Change.
   *
   * @throws WorkGraphException (at once) for a graph that is not a DAG of valid Tasks
   * @throws LifecycleException (in the future) for an unknown or archived Project
   */
  public CompletableFuture<ChangeCreated> create(
      String projectId, String clientRequestId, String title, WorkGraph workGraph) {
    validate(clientRequestId, workGraph);
    return create(projectId, clientRequestId, title, null, workGraph);
  }

  /**
   * Forks a variant of {@code parentChangeId}: a Change of the same Project with its own work
   * graph. When one variant is promoted its open siblings end {@code not_selected}; the daily
   * forks.sweep ends any it missed.
   */
  public CompletableFuture<ChangeCreated> fork(
      String parentChangeId, String clientRequestId, String title, WorkGraph workGraph) {
    ChangeInfo parent;
    try {
      parent =
          reads
              .change(parentChangeId)
              .orElseThrow(() -> LifecycleException.unknownChange(parentChangeId));
      validate(clientRequestId, workGraph);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return create(parent.projectId(), clientRequestId, title, parentChangeId, workGraph);
  }

  /** change.dispatch of {@code changeId}; the caller sends the returned wakes. */
  public CompletableFuture<Dispatched> dispatch(String changeId, String causedBy) {
    return shards.onChange(
        changeId,
        (tx, out, shard) -> dispatcher.dispatch(tx, out, shard.writerId(), changeId, causedBy));
  }

  private void validate(String clientRequestId, WorkGraph workGraph) {
    if (clientRequestId == null || clientRequestId.isBlank()) {
      throw new LifecycleException("a Change needs a client request id", true);
    }
    workGraph.validate(tasksMax);
  }

  private CompletableFuture<ChangeCreated> create(
      String projectId, String requestId, String title, String parentId, WorkGraph workGraph) {
    String changeId = LifecycleIds.changeId(projectId, requestId);
    ResourceShardActor shard = shards.changeShard(projectId, changeId);
    return shard.change(
        (tx, out) ->
            dispatcher.create(
                tx, out, shard.writerId(), projectId, requestId, title, parentId, workGraph));
  }
}
