package org.rhumbatron.indexer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.List;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.queue.QueueFailure;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;

/** The indexing queue's failure record in project_indexes; SQLite and PostgreSQL. */
class IndexingFailuresTest {
  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  private static final Instant NOW = Instant.parse("2026-12-02T12:00:00Z");

  private static Command build(String id, Long generation) {
    return build(id, "p1", generation);
  }

  private static Command build(String id, String projectId, Long generation) {
    ObjectNode payload = JsonNodeFactory.instance.objectNode();
    if (generation != null) {
      payload.put("generation", generation);
    }
    return new Command(id, CommandType.INDEX_BUILD, projectId, null, null, 1, NOW, null, payload);
  }

  private static QueueFailure<Command> failure(Command c, String reason) {
    return new QueueFailure<>(null, c, "{}", reason, false);
  }

  @DatabaseTest
  void aGivenUpIndexCommandIsAFailedIndexRowWithItsReasonAndAddsNoAttempt() {
    try (Database database = Database.open(db().url())) {
      database.inTransaction(
          tx ->
              tx.update(
                  "INSERT INTO projects (project_id, tenant_id, name, canonical_generation,"
                      + " created_at_ms, updated_at_ms) VALUES ('p1', 't', 'p1', 4, 0, 0)"));
      // The indexer's rows: generation 2 was built, generation 3 is building on its 4th attempt.
      database.inTransaction(
          tx ->
              tx.update(
                  "INSERT INTO project_indexes (project_id, generation, state, attempts,"
                      + " created_at_ms, updated_at_ms) VALUES ('p1', 2, 'ready', 1, 0, 0),"
                      + " ('p1', 3, 'building', 4, 0, 0)"));
      IndexingFailures failures = new IndexingFailures(database, new SettableClock(NOW));

      failures.gaveUp(failure(build("cmd_a", 7L), "indexer crashed"));
      failures.gaveUp(failure(build("cmd_b", 7L), "indexer crashed again"));
      failures.gaveUp(failure(build("cmd_c", null), "no generation given"));
      failures.gaveUp(failure(build("cmd_d", 2L), "a late delivery of a built generation"));
      failures.gaveUp(failure(build("cmd_e", 3L), "the 4th build failed"));
      failures.gaveUp(failure(build("cmd_f", "p-unknown", 1L), "unknown project p-unknown"));
      failures.gaveUp(new QueueFailure<>(null, null, "not json", "malformed", false));

      List<String> rows =
          database.read(
              tx ->
                  tx.query(
                      "SELECT generation, state, attempts, last_error FROM project_indexes"
                          + " ORDER BY project_id, generation",
                      rs ->
                          rs.getLong(1)
                              + " "
                              + rs.getString(2)
                              + " "
                              + rs.getInt(3)
                              + " "
                              + rs.getString(4)));
      assertThat(rows)
          .containsExactly(
              "2 ready 1 null",
              "3 failed 4 index.build cmd_e: the 4th build failed",
              "4 failed 0 index.build cmd_c: no generation given",
              "7 failed 0 index.build cmd_b: indexer crashed again");
    }
  }
}
