package org.rhumbatron.lifecycle.projects;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.coordinator.project.ProjectStatus;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.lifecycle.LifecycleShards;
import org.rhumbatron.lifecycle.changes.ChangeEnds;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.changes.Changes;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.protocol.EventType;

/**
 * The entry point of the Project aggregate: its creation by the root, its flags on the shard of
 * {@code project:<id>}, and the end of its open Changes once it is archived or deleted.
 */
public final class Projects {
  private final Coordinator coordinator;
  private final LifecycleShards shards;
  private final Database database;
  private final Changes changes;
  private final ChangeEnds ends;
  private final ProjectLedger projects;

  public Projects(
      Coordinator coordinator,
      LifecycleShards shards,
      Changes changes,
      ChangeEnds ends,
      ProjectLedger projects) {
    this.coordinator = coordinator;
    this.shards = shards;
    this.database = coordinator.database();
    this.changes = changes;
    this.ends = ends;
    this.projects = projects;
  }

  public CompletableFuture<Boolean> create(String projectId, String tenantId, String name) {
    return coordinator.root(projectId).createProject(tenantId, name);
  }

  public CompletableFuture<Boolean> setLiveApp(String projectId, boolean live, String causedBy) {
    return shards.onProject(
        projectId,
        (tx, out, shard) ->
            projects.setLiveApp(tx, out, shard.writerId(), projectId, live, causedBy));
  }

  public CompletableFuture<Boolean> archive(String projectId) {
    return shards
        .onProject(
            projectId, (tx, out, shard) -> projects.archive(tx, out, shard.writerId(), projectId))
        .thenCompose(changed -> endChanges(projectId, null).thenApply(ended -> changed));
  }

  public CompletableFuture<Boolean> delete(String projectId) {
    return shards
        .onProject(
            projectId, (tx, out, shard) -> projects.delete(tx, out, shard.writerId(), projectId))
        .thenCompose(changed -> endChanges(projectId, null).thenApply(ended -> changed));
  }

  public CompletableFuture<Integer> endChanges(String projectId, String causedBy) {
    Optional<ProjectInfo> project;
    List<String> open;
    try {
      project = project(projectId);
      if (project.isEmpty() || project.get().status() == ProjectStatus.ACTIVE) {
        return CompletableFuture.completedFuture(0);
      }
      open = changes.openChanges(projectId);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    String reason = endReason(project.get().status());
    List<CompletableFuture<Boolean>> ended =
        open.stream().map(id -> endChange(id, reason, causedBy)).toList();
    return CompletableFuture.allOf(ended.toArray(CompletableFuture[]::new))
        .thenApply(v -> (int) ended.stream().filter(CompletableFuture::join).count());
  }

  /** Why a Change of an archived or deleted Project ended: {@code project_<status>}. */
  public static String endReason(ProjectStatus status) {
    return "project_" + status.dbName();
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

  public Optional<ProjectInfo> project(String projectId) {
    return database.read(tx -> ProjectLedger.project(tx, projectId));
  }

  /** At most {@code limit} Projects in id order; all statuses when {@code status} is null. */
  public List<ProjectInfo> projects(String status, int limit) {
    LifecycleException.requirePositiveLimit(limit);
    return database.read(tx -> ProjectLedger.projects(tx, status, limit));
  }
}
