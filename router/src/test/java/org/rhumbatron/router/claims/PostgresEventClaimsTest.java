package org.rhumbatron.router.claims;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.DatabaseOptions;
import org.rhumbatron.platform.db.RowMapper;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.db.TestDatabase;

class PostgresEventClaimsTest extends EventClaimsContract {
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.postgres();

  private final EventClaims claims = new EventClaims(new SettableClock());

  private static final String CONSUMERS =
      "(VALUES ('causal-router'), ('project-view-projector')) AS v (c)";

  @Override
  TestDatabase db() {
    return database.database();
  }

  /**
   * pgjdbc prepares a statement on the server after 5 runs, and a generic plan made while
   * processed_events was small and never analyzed is a seq scan, kept however large the table
   * grows. Here the lookup runs 7 times on a small table under generic plans, the table grows, and
   * the next lookup must not scan it.
   */
  @Test
  void theClaimLookupDoesNotScanTheTableAfterItGrew() {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      ids.add("missing-" + i);
    }
    // One connection, so that what the driver prepared in one transaction is there in the next.
    try (Database db =
        Database.open(db().url(), DatabaseOptions.builder().postgresPoolSize(1).build())) {
      db.inTransaction(
          tx -> {
            // As on a server where autovacuum has not come by yet, with generic plans.
            tx.update("ALTER TABLE processed_events SET (autovacuum_enabled = off)");
            tx.update("SET plan_cache_mode = force_generic_plan");
            return tx.update(
                "INSERT INTO processed_events (consumer, event_id, processed_at_ms)"
                    + " SELECT c, 'e-' || g, g FROM generate_series(1, 150) g, "
                    + CONSUMERS);
          });
      for (int run = 0; run < 7; run++) {
        assertThat(claims.claimedAmong(db, "causal-router", ids)).isEmpty();
      }
      db.inTransaction(
          tx ->
              tx.update(
                  "INSERT INTO processed_events (consumer, event_id, processed_at_ms)"
                      + " SELECT c, 'e-' || g, g FROM generate_series(151, 50000) g, "
                      + CONSUMERS));
      long[] done =
          db.inTransaction(
              tx -> {
                // claimedAmong joins this transaction: the backend's own counts, before and after.
                String scans =
                    "SELECT seq_scan, COALESCE(idx_tup_fetch, 0) FROM pg_stat_xact_user_tables"
                        + " WHERE relname = 'processed_events'";
                RowMapper<long[]> counts = rs -> new long[] {rs.getLong(1), rs.getLong(2)};
                long[] before = tx.queryFirst(scans, counts).orElseThrow();
                // The same statement as before (100 ids), two of them claimed now.
                List<String> some = new ArrayList<>(ids.subList(2, ids.size()));
                some.addAll(List.of("e-7", "e-40000"));
                assertThat(claims.claimedAmong(db, "causal-router", some))
                    .containsExactlyInAnyOrder("e-7", "e-40000");
                long[] after = tx.queryFirst(scans, counts).orElseThrow();
                return new long[] {after[0] - before[0], after[1] - before[1]};
              });
      assertThat(done[0]).as("seq scans of processed_events by the lookup").isZero();
      assertThat(done[1])
          .as("rows the lookup fetched through an index (2 are claimed)")
          .isLessThan(100);
    }
  }
}
