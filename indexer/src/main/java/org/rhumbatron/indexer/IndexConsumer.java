package org.rhumbatron.indexer;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Clock;
import java.util.Optional;
import org.rhumbatron.coordinator.project.ProjectStatus;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.projects.ProjectInfo;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.queue.Delivery;
import org.rhumbatron.platform.queue.Outcome;
import org.rhumbatron.platform.queue.QueueHandler;
import org.rhumbatron.protocol.Command;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The consumer of the indexing queue (the seed's {@code indexer}). Its record is {@code
 * project_indexes}, one row per project and canonical generation: {@code building}, {@code ready}
 * or {@code failed}, with the builds started in {@code attempts} and the last error.
 *
 * <p>{@code index.build} indexes {@code payload.generation} (the router's, on {@code
 * artifact.promoted} and {@code canonical.advanced}) or, without one (the daily backfill), the
 * project's current canonical generation. A generation already {@code ready} builds nothing, so a
 * redelivery or the second of the router's two commands is a no-op. Otherwise the row becomes
 * {@code building} (attempts + 1), the {@link IndexBuilder} runs outside any transaction, and the
 * row becomes {@code ready}; a failed build writes {@code last_error} and throws, so the queue
 * retries it and its failure hook marks the row {@code failed} after the last retry. An archived or
 * deleted project is not indexed (maintenance purges its rows).
 *
 * <p>{@code index.purge} deletes every row of the project (the sweeps send it for archived and
 * deleted projects); a repeat deletes nothing. A command that can never succeed (an unknown
 * project, a bad generation, another type) is rejected.
 */
public final class IndexConsumer implements QueueHandler<Command> {
  private static final Logger log = LoggerFactory.getLogger(IndexConsumer.class);

  private final Lifecycle lifecycle;
  private final Database database;
  private final IndexBuilder builder;
  private final Clock clock;

  public IndexConsumer(Lifecycle lifecycle, Database database, IndexBuilder builder, Clock clock) {
    this.lifecycle = lifecycle;
    this.database = database;
    this.builder = builder;
    this.clock = clock;
  }

  @Override
  public Outcome handle(Command command, Delivery delivery) throws Exception {
    return switch (command.commandType()) {
      case INDEX_BUILD -> build(command);
      case INDEX_PURGE -> purge(command);
      default ->
          Outcome.reject(
              "indexing takes only index.build and index.purge, not "
                  + command.commandType().wireName());
    };
  }

  private Outcome build(Command command) throws Exception {
    String projectId = command.projectId();
    Optional<ProjectInfo> project = lifecycle.projects().project(projectId);
    if (project.isEmpty()) {
      return Outcome.reject(name(command) + ": unknown project " + projectId);
    }
    long current = project.get().canonicalGeneration();
    JsonNode given = command.payload().get("generation");
    if (given != null
        && !given.isNull()
        && !(given.isIntegralNumber() && given.canConvertToLong() && given.asLong() >= 0)) {
      return Outcome.reject(
          name(command) + ": payload generation must be a whole number, 0 or more, not " + given);
    }
    long generation = given == null || given.isNull() ? current : given.asLong();
    if (generation > current) {
      // The root writes the generation and its Events in one transaction: none can be ahead.
      return Outcome.reject(
          name(command)
              + ": generation "
              + generation
              + " is ahead of project "
              + projectId
              + "'s canonical generation "
              + current);
    }
    if (project.get().status() != ProjectStatus.ACTIVE) {
      log.info(
          "{}: project {} is {}, not indexed",
          name(command),
          projectId,
          project.get().status().dbName());
      return Outcome.ack();
    }
    int attempt = startBuilding(projectId, generation);
    if (attempt == 0) {
      log.debug(
          "{}: project {} generation {} is ready already", name(command), projectId, generation);
      return Outcome.ack();
    }
    try {
      builder.build(projectId, generation, attempt);
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      try {
        recordError(projectId, generation, e);
      } catch (RuntimeException recordFailed) {
        e.addSuppressed(recordFailed);
      }
      throw e;
    }
    markReady(projectId, generation);
    log.info(
        "{}: project {} generation {} indexed (attempt {})",
        name(command),
        projectId,
        generation,
        attempt);
    return Outcome.ack();
  }

  /**
   * Makes the row {@code building} with one more attempt, in one statement, unless it is {@code
   * ready}; returns the attempt, or 0 when the generation is ready already.
   */
  private int startBuilding(String projectId, long generation) {
    long now = clock.millis();
    return database.inTransaction(
        tx -> {
          int changed =
              tx.update(
                  "INSERT INTO project_indexes (project_id, generation, state, attempts,"
                      + " created_at_ms, updated_at_ms) VALUES (?, ?, ?, 1, ?, ?)"
                      + " ON CONFLICT (project_id, generation) DO UPDATE SET state = ?,"
                      + " attempts = project_indexes.attempts + 1,"
                      + " updated_at_ms = excluded.updated_at_ms"
                      + " WHERE project_indexes.state <> ?",
                  projectId,
                  generation,
                  IndexState.BUILDING.dbName(),
                  now,
                  now,
                  IndexState.BUILDING.dbName(),
                  IndexState.READY.dbName());
          if (changed == 0) {
            return 0;
          }
          return (int)
              tx.queryLong(
                  "SELECT attempts FROM project_indexes WHERE project_id = ? AND generation = ?",
                  projectId,
                  generation);
        });
  }

  private void markReady(String projectId, long generation) {
    long now = clock.millis();
    database.inTransaction(
        tx ->
            tx.update(
                "UPDATE project_indexes SET state = ?, updated_at_ms = ?"
                    + " WHERE project_id = ? AND generation = ?",
                IndexState.READY.dbName(),
                now,
                projectId,
                generation));
  }

  /** The row stays {@code building}: the queue retries it, and its failure hook ends it. */
  private void recordError(String projectId, long generation, Exception e) {
    long now = clock.millis();
    database.inTransaction(
        tx ->
            tx.update(
                "UPDATE project_indexes SET last_error = ?, updated_at_ms = ?"
                    + " WHERE project_id = ? AND generation = ? AND state <> ?",
                String.valueOf(e),
                now,
                projectId,
                generation,
                IndexState.READY.dbName()));
  }

  private Outcome purge(Command command) {
    int deleted =
        database.inTransaction(
            tx ->
                tx.update("DELETE FROM project_indexes WHERE project_id = ?", command.projectId()));
    log.info(
        "{}: {} index rows of project {} deleted", name(command), deleted, command.projectId());
    return Outcome.ack();
  }

  private static String name(Command command) {
    return command.commandType().wireName() + " " + command.commandId();
  }
}
