package org.rhumbatron.app;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Clock;
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
 * payload.generation}, else the project's current canonical generation).
 */
final class IndexingFailures implements QueueListener<Command> {
  private static final Logger log = LoggerFactory.getLogger(IndexingFailures.class);

  private final Database database;
  private final Clock clock;

  IndexingFailures(Database database, Clock clock) {
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
    database.inTransaction(
        tx -> {
          long gen =
              generation != null && generation.canConvertToLong()
                  ? generation.asLong()
                  : tx.queryLong(
                      "SELECT COALESCE(MAX(canonical_generation), 0) FROM projects"
                          + " WHERE project_id = ?",
                      command.projectId());
          return tx.update(
              "INSERT INTO project_indexes (project_id, generation, state, attempts, last_error,"
                  + " created_at_ms, updated_at_ms) VALUES (?, ?, 'failed', 1, ?, ?, ?)"
                  + " ON CONFLICT (project_id, generation) DO UPDATE SET state = 'failed',"
                  + " attempts = project_indexes.attempts + 1, last_error = excluded.last_error,"
                  + " updated_at_ms = excluded.updated_at_ms",
              command.projectId(),
              gen,
              command.commandType().wireName()
                  + " "
                  + command.commandId()
                  + ": "
                  + failure.reason(),
              now,
              now);
        });
    log.warn(
        "indexing gave up on {} {} for project {}: {}",
        command.commandType().wireName(),
        command.commandId(),
        command.projectId(),
        failure.reason());
  }
}
