package org.rhumbatron.lifecycle;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.coordinator.project.ProjectStatus;
import org.rhumbatron.protocol.EventType;

/**
 * A Project's life: its creation by the root, its flags on the shard of {@code project:<id>}, and
 * the end of its open Changes once it is archived or deleted.
 */
final class LifecycleProjects {
  private final Coordinator coordinator;
  private final LifecycleShards shards;
  private final LifecycleReads reads;
  private final ChangeEnds ends;
  private final ProjectLedger projects;

  LifecycleProjects(
      Coordinator coordinator,
      LifecycleShards shards,
      LifecycleReads reads,
      ChangeEnds ends,
      ProjectLedger projects) {
    this.coordinator = coordinator;
    this.shards = shards;
    this.reads = reads;
    this.ends = ends;
    this.projects = projects;
  }

  CompletableFuture<Boolean> create(String projectId, String tenantId, String name) {
    return coordinator.root(projectId).createProject(tenantId, name);
  }

  CompletableFuture<Boolean> setLiveApp(String projectId, boolean live, String causedBy) {
    return shards.onProject(
        projectId,
        (tx, out, shard) ->
            projects.setLiveApp(tx, out, shard.writerId(), projectId, live, causedBy));
  }

  CompletableFuture<Boolean> archive(String projectId) {
    return shards
        .onProject(
            projectId, (tx, out, shard) -> projects.archive(tx, out, shard.writerId(), projectId))
        .thenCompose(changed -> endChanges(projectId, null).thenApply(ended -> changed));
  }

  CompletableFuture<Boolean> delete(String projectId) {
    return shards
        .onProject(
            projectId, (tx, out, shard) -> projects.delete(tx, out, shard.writerId(), projectId))
        .thenCompose(changed -> endChanges(projectId, null).thenApply(ended -> changed));
  }

  CompletableFuture<Integer> endChanges(String projectId, String causedBy) {
    Optional<ProjectInfo> project;
    List<String> open;
    try {
      project = reads.project(projectId);
      if (project.isEmpty() || project.get().status() == ProjectStatus.ACTIVE) {
        return CompletableFuture.completedFuture(0);
      }
      open = reads.openChanges(projectId);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    String reason = Lifecycle.projectEndReason(project.get().status());
    List<CompletableFuture<Boolean>> ended =
        open.stream().map(id -> endChange(id, reason, causedBy)).toList();
    return CompletableFuture.allOf(ended.toArray(CompletableFuture[]::new))
        .thenApply(v -> (int) ended.stream().filter(CompletableFuture::join).count());
  }

  /** Ends one Change of an ended Project; false when it had ended meanwhile in another way. */
  private CompletableFuture<Boolean> endChange(String changeId, String reason, String causedBy) {
    return ends.endChange(
            changeId, ChangeState.CANCELLED, EventType.CHANGE_CANCELLED, reason, causedBy)
        .exceptionallyCompose(
            e ->
                unwrap(e) instanceof LifecycleException le && le.permanent()
                    ? CompletableFuture.completedFuture(false)
                    : CompletableFuture.failedFuture(e));
  }

  private static Throwable unwrap(Throwable e) {
    while (e instanceof CompletionException && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }
}
