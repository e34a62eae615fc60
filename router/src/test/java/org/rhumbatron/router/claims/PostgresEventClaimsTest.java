package org.rhumbatron.router.claims;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.DatabaseOptions;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.db.TestDatabase;

class PostgresEventClaimsTest extends EventClaimsContract {
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.postgres();

  private static final String CONSUMERS =
      "(VALUES ('causal-router'), ('project-view-projector')) AS v (c)";

  @Override
  TestDatabase db() {
    return database.database();
  }

  /**
   * The driver prepares a statement on the server after 5 runs; PostgreSQL may then keep a generic
   * plan made while processed_events was small, which found the ids by scanning every claim of the
   * consumer. Here the lookup runs 7 times on a small table, the table grows (two consumers'
   * claims, never analyzed), and the plan of the next run must still find each id through the
   * primary key.
   */
  @Test
  void theClaimLookupFindsEachIdByTheKeyAfterTheTableGrew() {
    int ids = 100;
    String sql = EventClaims.claimedAmongSql(ids).replace("?", "%s");
    List<String> params = new ArrayList<>();
    List<String> types = new ArrayList<>();
    List<String> values = new ArrayList<>();
    for (int i = 0; i < 2 * ids; i++) {
      params.add("$" + (i + 1));
      types.add("text");
      values.add(i % 2 == 0 ? "'causal-router'" : "'missing-" + i + "'");
    }
    String prepared = String.format(sql, params.toArray());
    String execute = "EXECUTE lookup(" + String.join(", ", values) + ")";
    // One connection, so that the statement prepared in one transaction is there in the next.
    try (Database db =
        Database.open(db().url(), DatabaseOptions.builder().postgresPoolSize(1).build())) {
      db.inTransaction(
          tx ->
              tx.update(
                  "INSERT INTO processed_events (consumer, event_id, processed_at_ms)"
                      + " SELECT c, 'e-' || g, g FROM generate_series(1, 150) g, "
                      + CONSUMERS));
      db.inTransaction(
          tx -> {
            tx.update("PREPARE lookup(" + String.join(", ", types) + ") AS " + prepared);
            for (int run = 0; run < 7; run++) {
              tx.query(execute, rs -> rs.getString(1));
            }
            return null;
          });
      db.inTransaction(
          tx ->
              tx.update(
                  "INSERT INTO processed_events (consumer, event_id, processed_at_ms)"
                      + " SELECT c, 'e-' || g, g FROM generate_series(151, 50000) g, "
                      + CONSUMERS));
      String plan =
          db.inTransaction(
              tx -> String.join("\n", tx.query("EXPLAIN " + execute, rs -> rs.getString(1))));
      assertThat(plan)
          .as("the plan of the lookup on the grown table")
          .containsPattern("Index Cond: .*event_id")
          .doesNotContain("Filter:");
    }
  }
}
