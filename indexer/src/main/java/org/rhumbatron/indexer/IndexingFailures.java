package org.rhumbatron.indexer;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Clock;
import java.util.Optional;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.queue.QueueFailure;
import org.rhumbatron.platform.queue.QueueListener;
import org.rhumbatron.protocol.Command;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The indexing queue has no dead-letter queue: when its consumer gives up on an {@code index.build}
 * or {@code index.purge}, the failure goes to {@code project_indexes} (state {@code failed}, the
 * reason in {@code last_error}), for the project and the generation the command names ({@code
 * payload.generation}, else the project's current canonical generation). It adds no attempt (the
 * indexer counts the builds it starts), leaves a {@code ready} row alone, and records nothing for a
 * project that does not exist. It lives beside {@link IndexConsumer}: the indexer is the one writer
 * of its table, the server only hangs this hook on the queue.
 */
public final class IndexingFailures implements QueueListener<Command> {
  private static final Logger log = LoggerFactory.getLogger(IndexingFailures.class);

  private final Database database;
  private final Clock clock;

  public IndexingFailures(Database database, Clock clock) {
    this.database = database;
    this.clock = clock;
  }

  @Override
  public void gaveUp(QueueFailure<Command> failure) {
    Command command = failure.message();
    if (command == null || command.projectId() == null) {
      // Not a Command that names a project: the consumer has logged it, nothing to record here.
      return;
    }
    JsonNode generation = command.payload().get("generation");
    long now = clock.millis();
    boolean recorded =
        database.inTransaction(
            tx -> {
              Optional<Long> current =
                  tx.queryFirst(
                      "SELECT canonical_generation FROM projects WHERE project_id = ?",
                      rs -> rs.getLong(1),
                      command.projectId());
              if (current.isEmpty()) {
                return false; // no index of a project core does not know (the indexer rejected it)
              }
              long gen =
                  generation != null && generation.canConvertToLong()
                      ? generation.asLong()
                      : current.get();
              // attempts counts the builds the indexer started, so the hook adds none; a ready
              // index stays ready (e.g. a delivery past the last retry of a build that succeeded).
              tx.update(
                  "INSERT INTO project_indexes (project_id, generation, state, attempts,"
                      + " last_error, created_at_ms, updated_at_ms)"
                      + " VALUES (?, ?, ?, 0, ?, ?, ?)"
                      + " ON CONFLICT (project_id, generation) DO UPDATE SET state = ?,"
                      + " last_error = excluded.last_error, updated_at_ms = excluded.updated_at_ms"
                      + " WHERE project_indexes.state <> ?",
                  command.projectId(),
                  gen,
                  IndexState.FAILED.dbName(),
                  command.commandType().wireName()
                      + " "
                      + command.commandId()
                      + ": "
                      + failure.reason(),
                  now,
                  now,
                  IndexState.FAILED.dbName(),
                  IndexState.READY.dbName());
              return true;
            });
    if (!recorded) {
      log.warn(
          "indexing gave up on {} {} for unknown project {}, nothing recorded: {}",
          command.commandType().wireName(),
          command.commandId(),
          command.projectId(),
          failure.reason());
      return;
    }
    log.warn(
        "indexing gave up on {} {} for project {}: {}",
        command.commandType().wireName(),
        command.commandId(),
        command.projectId(),
        failure.reason());
  }
}
