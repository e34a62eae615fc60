package org.rhumbatron.lifecycle.changes;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.rhumbatron.coordinator.shard.ResourceShardActor;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.lifecycle.LifecycleIds;
import org.rhumbatron.lifecycle.LifecycleShards;
import org.rhumbatron.lifecycle.StoredStates;
import org.rhumbatron.lifecycle.tasks.TaskInfo;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.lifecycle.tasks.TaskState;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Placeholders;

/**
 * The entry point of the Change aggregate: a new Change or fork variant, and change.dispatch, each
 * on the shard of {@code change:<id>}. Its end and change.settle are {@link ChangeEnds}'s.
 */
public final class Changes {
  private final LifecycleShards shards;
  private final Database database;
  private final ChangeDispatcher dispatcher;
  private final int tasksMax;

  public Changes(
      LifecycleShards shards, Database database, ChangeDispatcher dispatcher, Settings settings) {
    this.shards = shards;
    this.database = database;
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
          change(parentChangeId)
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

  public Optional<ChangeInfo> change(String changeId) {
    return database.read(tx -> ChangeLedger.change(tx, changeId));
  }

  /** The Changes of a project, oldest first, only those in {@code state} unless it is null. */
  public List<ChangeInfo> changes(String projectId, String state, int limit) {
    LifecycleException.requirePositiveLimit(limit);
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

  /** The open Changes of a project, oldest first. */
  public List<String> openChanges(String projectId) {
    return openChanges(projectId, "");
  }

  /** The open Changes of a project, oldest first, at most {@code limit}. */
  public List<String> openChanges(String projectId, int limit) {
    LifecycleException.requirePositiveLimit(limit);
    return openChanges(projectId, " LIMIT " + limit);
  }

  private List<String> openChanges(String projectId, String limitClause) {
    return ids(
        "SELECT change_id FROM changes WHERE project_id = ? AND state IN ("
            + Placeholders.of(ChangeState.OPEN_STATES)
            + ") ORDER BY created_at_ms, change_id"
            + limitClause,
        withOpenStates(projectId));
  }

  /** The open fork siblings of {@code changeId} (other variants of its parent). */
  public List<String> openSiblings(String changeId) {
    return ids(
        "SELECT s.change_id FROM changes c JOIN changes s"
            + " ON s.parent_change_id = c.parent_change_id AND s.change_id <> c.change_id"
            + " WHERE c.change_id = ? AND s.state IN ("
            + Placeholders.of(ChangeState.OPEN_STATES)
            + ") ORDER BY s.created_at_ms, s.change_id",
        withOpenStates(changeId));
  }

  /**
   * Open fork variants, oldest first, of which a sibling or the parent completed or was promoted:
   * forks.sweep ends them {@code not_selected}.
   */
  public List<String> forksNotSelected(int limit) {
    LifecycleException.requirePositiveLimit(limit);
    List<Object> args = new ArrayList<>(StoredStates.dbNames(ChangeState.OPEN_STATES));
    args.add(ChangeState.COMPLETED.dbName());
    return ids(
        "SELECT f.change_id FROM changes f WHERE f.parent_change_id IS NOT NULL"
            + " AND f.state IN ("
            + Placeholders.of(ChangeState.OPEN_STATES)
            + ") AND EXISTS (SELECT 1 FROM changes s WHERE s.change_id <> f.change_id"
            + " AND (s.state = ? OR s.promoted_at_ms IS NOT NULL)"
            + " AND (s.change_id = f.parent_change_id"
            + " OR s.parent_change_id = f.parent_change_id))"
            + " ORDER BY f.created_at_ms, f.change_id LIMIT "
            + limit,
        args.toArray());
  }

  /** The first column of each row of {@code sql}. */
  private List<String> ids(String sql, Object... args) {
    return database.read(tx -> tx.query(sql, rs -> rs.getString(1), args));
  }

  /** {@code first}, then the stored names of {@link ChangeState#OPEN_STATES}: query parameters. */
  private static Object[] withOpenStates(String first) {
    List<Object> args = new ArrayList<>();
    args.add(first);
    args.addAll(StoredStates.dbNames(ChangeState.OPEN_STATES));
    return args.toArray();
  }
}
