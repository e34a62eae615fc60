package org.rhumbatron.lifecycle;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.function.BiConsumer;
import org.rhumbatron.platform.concurrent.DaemonThreads;
import org.rhumbatron.protocol.EventType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Change's end and what follows it once committed: the Agents of its cancelled Tasks told to
 * stop, and every claim its Tasks still hold released, each on the shard of its key.
 */
final class ChangeEnds {
  private static final Logger log = LoggerFactory.getLogger(ChangeEnds.class);
  private final LifecycleShards shards;
  private final LifecycleReads reads;
  private final ChangeSettler settler;
  private final ResourceLedger resources;
  private volatile BiConsumer<TaskRef, String> taskStops = (task, reason) -> {};
  // Futures of the shards complete on the database's commit thread, which must not block.
  private final Executor afterEnd =
      Executors.newCachedThreadPool(DaemonThreads.named("change-end"));

  ChangeEnds(
      LifecycleShards shards,
      LifecycleReads reads,
      ChangeSettler settler,
      ResourceLedger resources) {
    this.shards = shards;
    this.reads = reads;
    this.settler = settler;
    this.resources = resources;
  }

  void whenTaskStops(BiConsumer<TaskRef, String> stop) {
    this.taskStops = stop;
  }

  CompletableFuture<Boolean> endChange(
      String changeId, ChangeState state, EventType type, String reason, String causedBy) {
    return afterEnd(
        changeId,
        shards.onChange(
            changeId,
            (tx, out, shard) ->
                settler.end(tx, out, shard.writerId(), changeId, state, type, reason, causedBy)));
  }

  /** Once {@code ended} committed: stops and releases, then completes with whether it changed. */
  CompletableFuture<Boolean> afterEnd(
      String changeId, CompletableFuture<ChangeSettler.Ended> ended) {
    return ended.thenComposeAsync(
        e -> stopAndRelease(changeId, e.reason(), e.stopped()).thenApply(v -> e.changed()),
        afterEnd);
  }

  CompletableFuture<Settled> settle(String changeId, String causedBy) {
    return shards
        .onChange(
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
   * A repeated end releases what an interrupted one left; the claims' expiry is the backstop after
   * a crash.
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
    CompletableFuture<?>[] releases =
        reads.heldClaims(changeId).stream()
            .map(
                c ->
                    shards.onResource(
                        c.ref().projectId(),
                        c.key(),
                        (tx, out, shard) -> {
                          resources.releaseClaim(tx, out, shard, c.ref(), c.key());
                          return null;
                        }))
            .toArray(CompletableFuture[]::new);
    return CompletableFuture.allOf(releases);
  }
}
