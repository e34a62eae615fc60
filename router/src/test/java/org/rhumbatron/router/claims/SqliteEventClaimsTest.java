package org.rhumbatron.router.claims;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.db.TestDatabase;

class SqliteEventClaimsTest extends EventClaimsContract {
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.sqlite();

  @Override
  TestDatabase db() {
    return database.database();
  }

  /** SQLite searches the primary key once per id; a row-value IN list would scan the table. */
  @Test
  void theClaimLookupSearchesTheKeyForEachId() {
    int ids = 100;
    List<Object> args = new ArrayList<>();
    for (int i = 0; i < ids; i++) {
      args.add("causal-router");
      args.add("e-" + i);
    }
    try (Database db = Database.open(db().url())) {
      String plan =
          db.read(
              tx ->
                  String.join(
                      "\n",
                      tx.query(
                          "EXPLAIN QUERY PLAN " + EventClaims.claimedAmongSql(ids),
                          rs -> rs.getString("detail"),
                          args.toArray())));
      assertThat(plan)
          .contains("SEARCH processed_events USING")
          .contains("(consumer=? AND event_id=?)")
          .doesNotContain("SCAN processed_events");
    }
  }
}
