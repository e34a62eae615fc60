package org.rhumbatron.lifecycle.tasks;

import java.sql.SQLException;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.rhumbatron.coordinator.outbox.OutboxActor.Appender;
import org.rhumbatron.coordinator.shard.ResourceShardActor;
import org.rhumbatron.lifecycle.LifecycleShards;
import org.rhumbatron.lifecycle.claims.ActiveScopes;
import org.rhumbatron.lifecycle.claims.ResourceLedger;
import org.rhumbatron.lifecycle.routes.ModelRouted;
import org.rhumbatron.lifecycle.routes.ModelRoutes;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Tx;

/**
 * What an Agent reports of its Task, each on the shard that owns it: the Task's steps on the shard
 * of its Change, intents and claims on the shard of their resource key.
 */
public final class AgentReports {
  /** A report that returns nothing. */
  @FunctionalInterface
  private interface Step {
    void run(Tx tx, Appender out, ResourceShardActor shard) throws SQLException;
  }

  private final LifecycleShards shards;
  private final TaskReports reports;
  private final ResourceLedger resources;
  private final ModelRoutes modelRoutes;
  private final Database database;

  public AgentReports(
      LifecycleShards shards,
      TaskReports reports,
      ResourceLedger resources,
      ModelRoutes modelRoutes,
      Database database) {
    this.shards = shards;
    this.reports = reports;
    this.resources = resources;
    this.modelRoutes = modelRoutes;
    this.database = database;
  }

  public CompletableFuture<Void> agentWoken(TaskRef ref, String commandId) {
    return onTask(
        ref, (tx, out, shard) -> reports.agentWoken(tx, out, shard.writerId(), ref, commandId));
  }

  public CompletableFuture<Void> start(TaskRef ref) {
    return onTask(ref, (tx, out, shard) -> reports.start(tx, out, shard.writerId(), ref));
  }

  public CompletableFuture<String> proposeChangeset(TaskRef ref) {
    return shards.onTask(
        ref, (tx, out, shard) -> reports.proposeChangeset(tx, out, shard.writerId(), ref));
  }

  public CompletableFuture<Void> complete(TaskRef ref) {
    return onTask(ref, (tx, out, shard) -> reports.complete(tx, out, shard.writerId(), ref));
  }

  public CompletableFuture<Void> fail(TaskRef ref, String error) {
    return onTask(ref, (tx, out, shard) -> reports.fail(tx, out, shard.writerId(), ref, error));
  }

  public CompletableFuture<Void> declareIntent(TaskRef ref, String key) {
    return onKey(ref, key, (tx, out, shard) -> resources.declareIntent(tx, out, shard, ref, key));
  }

  public CompletableFuture<Void> acquireClaim(TaskRef ref, String key) {
    return onKey(ref, key, (tx, out, shard) -> resources.acquireClaim(tx, out, shard, ref, key));
  }

  public CompletableFuture<Void> releaseClaim(TaskRef ref, String key) {
    return onKey(ref, key, (tx, out, shard) -> resources.releaseClaim(tx, out, shard, ref, key));
  }

  public CompletableFuture<ModelRouted> recordModelRoute(ModelRouted decision) {
    return shards.on(
        shards.changeShard(decision.projectId(), decision.changeId()),
        (tx, out, shard) -> modelRoutes.record(tx, out, shard.writerId(), decision));
  }

  /** The Clef-flash decision already recorded for the Agent of {@code taskId} and the Event. */
  public Optional<ModelRouted> modelRoute(String eventId, String taskId) {
    return database.read(tx -> ModelRoutes.find(tx, eventId, taskId));
  }

  /** The active Agents of the project whose scopes overlap {@code keys} (see ActiveScopes). */
  public List<ActiveScopes.Match> overlapping(
      String projectId, Collection<String> keys, String exceptAgent) {
    return database.read(tx -> ActiveScopes.overlapping(tx, projectId, keys, exceptAgent));
  }

  private CompletableFuture<Void> onTask(TaskRef ref, Step step) {
    return shards.onTask(
        ref,
        (tx, out, shard) -> {
          step.run(tx, out, shard);
          return null;
        });
  }

  private CompletableFuture<Void> onKey(TaskRef ref, String key, Step step) {
    return shards.onResource(
        ref.projectId(),
        key,
        (tx, out, shard) -> {
          step.run(tx, out, shard);
          return null;
        });
  }
}
