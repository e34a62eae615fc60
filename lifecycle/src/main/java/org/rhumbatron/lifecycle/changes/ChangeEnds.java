package org.rhumbatron.lifecycle.changes;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.function.BiConsumer;
import org.rhumbatron.lifecycle.LifecycleShards;
import org.rhumbatron.lifecycle.claims.ResourceLedger;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.platform.concurrent.DaemonThreads;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.protocol.EventType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Change's end and what follows it once committed: the Agents of its cancelled Tasks told to
 * stop, and every claim its Tasks still hold released, each on the shard of its key.
 */
public final class ChangeEnds {
  private static final Logger log = LoggerFactory.getLogger(ChangeEnds.class);
  private final LifecycleShards shards;
  private final Database database;
  private final ChangeSettler settler;
  private final ResourceLedger resources;
  private volatile BiConsumer<TaskRef, String> taskStops = (task, reason) -> {};
  // Futures of the shards complete on the database's commit thread, which must not block.
  private final Executor afterEnd =
      Executors.newCachedThreadPool(DaemonThreads.named("change-end"));

  public ChangeEnds(
      LifecycleShards shards, Database database, ChangeSettler settler, ResourceLedger resources) {
    this.shards = shards;
    this.database = database;
    this.settler = settler;
    this.resources = resources;
  }

  /**
   * Who tells an Agent to stop when its Task was cancelled because its Change ended (the agents
   * module gives its runtime's stop): called with the Task's attempt and the end reason ({@code
   * change_failed}, ...) after the Change's end committed; it must not block.
   */
  public void whenTaskStops(BiConsumer<TaskRef, String> stop) {
    this.taskStops = stop;
  }

  /** → cancelled ({@code change.cancelled}); false when it was cancelled already. */
  public CompletableFuture<Boolean> cancel(String changeId) {
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
        shards.onChange(
            changeId,
            (tx, out, shard) ->
                settler.end(tx, out, shard.writerId(), changeId, state, type, reason, causedBy)));
  }

  /** Once {@code ended} committed: stops and releases, then completes with whether it changed. */
  public CompletableFuture<Boolean> afterEnd(
      String changeId, CompletableFuture<ChangeSettler.Ended> ended) {
    return ended.thenComposeAsync(
        e -> stopAndRelease(changeId, e.reason(), e.stopped()).thenApply(v -> e.changed()),
        afterEnd);
  }

  /**
   * change.settle of {@code changeId}; the caller sends the wakes of its dispatch. A Change
   * <em>cannot move on its own</em> when it is open, none of its Tasks is assigned or running, and
   * not every Task is completed: nothing will write the next Event of its work graph. The
   * maintenance sweep's change.settle ({@code maintenance.every-minutes}) resolves it. When it
   * fails the Change, the Agents of its cancelled Tasks are stopped and its claims released first.
   */
  public CompletableFuture<Settled> settle(String changeId, String causedBy) {
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
        database.read(tx -> ResourceLedger.heldClaims(tx, changeId)).stream()
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
