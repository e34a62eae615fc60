package org.rhumbatron.lifecycle;

import java.util.concurrent.CompletableFuture;
import org.rhumbatron.coordinator.shard.ResourceShardActor;
import org.rhumbatron.platform.config.Settings;

/** A new Change or fork variant, created on the shard of {@code change:<id>}. */
final class ChangeCreation {
  private final LifecycleShards shards;
  private final LifecycleReads reads;
  private final ChangeDispatcher dispatcher;
  private final int tasksMax;

  ChangeCreation(
      LifecycleShards shards,
      LifecycleReads reads,
      ChangeDispatcher dispatcher,
      Settings settings) {
    this.shards = shards;
    this.reads = reads;
    this.dispatcher = dispatcher;
    this.tasksMax = settings.get(Settings.TASKS_PER_CHANGE_MAX);
  }

  CompletableFuture<ChangeCreated> create(
      String projectId, String clientRequestId, String title, WorkGraph workGraph) {
    validate(clientRequestId, workGraph);
    return create(projectId, clientRequestId, title, null, workGraph);
  }

  CompletableFuture<ChangeCreated> fork(
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
