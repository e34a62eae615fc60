package org.rhumbatron.lifecycle;

import java.sql.SQLException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.coordinator.outbox.OutboxActor.Appender;
import org.rhumbatron.coordinator.outbox.OutboxActor.EventWork;
import org.rhumbatron.coordinator.shard.ResourceShardActor;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.ChangeLedger;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.platform.db.Tx;

/**
 * Which shard owns a state change: {@code change:<id>} for a Change, its Tasks, Candidates and
 * releases; a resource key for its intents and claims; {@code project:<id>} for a Project's flags.
 */
public final class LifecycleShards {
  /** A state change on a shard, with the shard at hand (for its writer id and alarm). */
  @FunctionalInterface
  public interface ShardWork<T> {
    T run(Tx tx, Appender out, ResourceShardActor shard) throws SQLException;
  }

  private final Coordinator coordinator;

  LifecycleShards(Coordinator coordinator) {
    this.coordinator = coordinator;
  }

  public <T> CompletableFuture<T> on(ResourceShardActor shard, ShardWork<T> work) {
    EventWork<T> body = (tx, out) -> work.run(tx, out, shard);
    return shard.change(body);
  }

  public ResourceShardActor changeShard(String projectId, String changeId) {
    return coordinator.changeEvents().shardFor(projectId, "change:" + changeId);
  }

  public <T> CompletableFuture<T> onChange(String changeId, ShardWork<T> work) {
    String projectId;
    try {
      projectId =
          coordinator
              .database()
              .read(tx -> ChangeLedger.change(tx, changeId))
              .map(ChangeInfo::projectId)
              .orElseThrow(() -> LifecycleException.unknownChange(changeId));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return on(changeShard(projectId, changeId), work);
  }

  public <T> CompletableFuture<T> onCandidate(String candidateId, ShardWork<T> work) {
    return onChangeOf(changeOfCandidate(candidateId), "candidate " + candidateId, work);
  }

  public <T> CompletableFuture<T> onRelease(String releaseId, ShardWork<T> work) {
    return onChangeOf(changeOfRelease(releaseId), "release " + releaseId, work);
  }

  private <T> CompletableFuture<T> onChangeOf(
      Optional<String> changeId, String what, ShardWork<T> work) {
    if (changeId.isEmpty()) {
      return CompletableFuture.failedFuture(new LifecycleException("unknown " + what, true));
    }
    return onChange(changeId.get(), work);
  }

  public <T> CompletableFuture<T> onTask(TaskRef ref, ShardWork<T> work) {
    return on(changeShard(ref.projectId(), ref.changeId()), work);
  }

  public <T> CompletableFuture<T> onResource(String projectId, String key, ShardWork<T> work) {
    return on(coordinator.changeEvents().shardFor(projectId, key), work);
  }

  public <T> CompletableFuture<T> onProject(String projectId, ShardWork<T> work) {
    return onResource(projectId, "project:" + projectId, work);
  }

  private Optional<String> changeOfCandidate(String candidateId) {
    return coordinator
        .database()
        .read(
            tx ->
                tx.queryFirst(
                    "SELECT change_id FROM candidates WHERE candidate_id = ?",
                    rs -> rs.getString(1),
                    candidateId));
  }

  private Optional<String> changeOfRelease(String releaseId) {
    return coordinator
        .database()
        .read(
            tx ->
                tx.queryFirst(
                    "SELECT change_id FROM releases WHERE release_id = ?",
                    rs -> rs.getString(1),
                    releaseId));
  }
}
