package org.rhumbatron.platform.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;

/** Both bindings write platform_metrics rows; run against SQLite and PostgreSQL. */
class PlatformMetricsTest {
  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  private final SettableClock clock = new SettableClock(Instant.parse("2026-05-06T07:08:09.010Z"));

  record Row(
      String binding,
      String name,
      double value,
      String labels,
      String project,
      String event,
      long at) {}

  static List<Row> rows(Database db) {
    return db.read(
        tx ->
            tx.query(
                "SELECT binding, name, value, labels, project_id, event_id, recorded_at_ms"
                    + " FROM platform_metrics ORDER BY id",
                rs ->
                    new Row(
                        rs.getString(1),
                        rs.getString(2),
                        rs.getDouble(3),
                        rs.getString(4),
                        rs.getString(5),
                        rs.getString(6),
                        rs.getLong(7))));
  }

  @DatabaseTest
  void aModulesOwnPointIsAMetricsRowAtTheClocksTime() {
    try (Database db = Database.open(db().url())) {
      Metrics metrics = new PlatformMetrics(db, clock, MetricsBinding.METRICS);
      metrics.record("false_wakeup", 1, Map.of("queue", "agent-wakeups", "agent", "a1"));
      assertThat(rows(db))
          .containsExactly(
              new Row(
                  "METRICS",
                  "false_wakeup",
                  1.0,
                  "{\"agent\":\"a1\",\"queue\":\"agent-wakeups\"}",
                  null,
                  null,
                  clock.millis()));
    }
  }

  @DatabaseTest
  void aPointInTheCallersTransactionRollsBackWithIt() {
    try (Database db = Database.open(db().url())) {
      Metrics metrics = new PlatformMetrics(db, clock, MetricsBinding.METRICS);
      assertThatThrownBy(
              () ->
                  db.inTransaction(
                      tx -> {
                        metrics.record(tx, "false_wakeup", 1, Map.of());
                        throw new IllegalStateException("the effect failed");
                      }))
          .hasMessage("the effect failed");
      db.inTransaction(
          tx -> {
            metrics.record(tx, "queue_depth", 2.5, Map.of());
            return null;
          });
      assertThat(rows(db)).extracting(Row::name).containsExactly("queue_depth");
    }
  }

  @DatabaseTest
  void anEventPointCarriesItsProjectEventAndTime() {
    try (Database db = Database.open(db().url())) {
      PlatformMetrics eventMetrics = new PlatformMetrics(db, clock, MetricsBinding.EVENT_METRICS);
      Instant at = Instant.parse("2026-01-02T03:04:05.006Z");
      db.inTransaction(
          tx -> {
            eventMetrics.write(
                tx,
                new DataPoint(
                    "task_completed",
                    1,
                    Map.of("event_type", "task.completed"),
                    "p1",
                    "evt_1",
                    at));
            return null;
          });
      assertThat(rows(db))
          .containsExactly(
              new Row(
                  "EVENT_METRICS",
                  "task_completed",
                  1.0,
                  "{\"event_type\":\"task.completed\"}",
                  "p1",
                  "evt_1",
                  at.toEpochMilli()));
    }
  }

  @DatabaseTest
  void aPointThatBreaksARuleIsRefusedNamingTheField() {
    assertThatThrownBy(
            () -> new DataPoint("Task-Completed", 1, Map.of(), null, null, Instant.EPOCH))
        .isInstanceOf(MetricsException.class)
        .hasMessageContaining("name 'Task-Completed'");
    assertThatThrownBy(() -> new DataPoint("x", Double.NaN, Map.of(), null, null, Instant.EPOCH))
        .isInstanceOf(MetricsException.class)
        .hasMessageContaining("value of x");
  }
}
