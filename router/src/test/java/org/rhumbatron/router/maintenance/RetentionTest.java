package org.rhumbatron.router.maintenance;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.BatchedPurge;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;

/**
 * Nothing grows without bound: one housekeeping run deletes every row past each table's horizon,
 * far more than the seed's 5,000, in transactions of at most 5,000, and keeps the rows inside it;
 * SQLite and PostgreSQL.
 */
class RetentionTest {
  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  /** More past-horizon rows than two batches of the seed's 5,000 hold. */
  private static final int OLD = 12_345;

  private static final int FRESH = 7;
  private static final int SEED_BATCH = 5_000;
  private static final Instant WRITTEN = Instant.parse("2026-11-01T10:00:00Z");

  private final SettableClock clock = new SettableClock(WRITTEN);
  private Database database;

  @BeforeEach
  void open() {
    database = Database.open(db().url());
  }

  @AfterEach
  void close() {
    database.close();
  }

  private Maintenance maintenance(Settings settings) {
    return new Maintenance(
        database, c -> {}, MaintenanceTest.deadLetters(database, clock), settings);
  }

  /**
   * Writes {@link #OLD} rows, then 2 minutes later {@link #FRESH} rows, then runs the daily tick
   * (or the release sweep) a minute after the old rows passed {@code keep}; checks the purge of
   * {@code table} and what is left.
   */
  private BatchedPurge.Result oldRowsGo(
      String table, Duration keep, Rows insert, boolean daily, Settings settings) {
    insert.write(OLD, "old", clock.millis());
    clock.advance(Duration.ofMinutes(2));
    insert.write(FRESH, "fresh", clock.millis());
    clock.advance(
        keep.minusMinutes(1)); // old rows a minute past the horizon, fresh a minute inside
    Maintenance m = maintenance(settings);
    MaintenanceReport report =
        daily ? m.runDaily(clock.instant()) : m.runReleaseSweep(clock.instant());

    BatchedPurge.Result purge = report.purge(table).orElseThrow();
    assertThat(purge.deleted()).as("every row past the horizon").isEqualTo(OLD);
    assertThat(purge.largestBatch())
        .as("a batch holds the seed's 5,000 at most")
        .isEqualTo(SEED_BATCH);
    assertThat(purge.batches()).as("12,345 rows: 5,000 + 5,000 + 2,345").isEqualTo(3);
    assertThat(count(table, "old")).isZero();
    assertThat(count(table, "fresh")).as("rows inside the horizon stay").isEqualTo(FRESH);
    return purge;
  }

  @DatabaseTest
  void theDailyTickDeletesEveryClaimPastProcessedEventsKeep() {
    oldRowsGo(
        "processed_events",
        Duration.ofDays(14),
        claims("project-view-projector"),
        true,
        Settings.defaults());
  }

  @DatabaseTest
  void theDailyTickDeletesTheFeedPastProjectEventsKeep() {
    Duration keep = Duration.ofDays(3);
    oldRowsGo(
        "project_events",
        keep,
        (n, tag, at) ->
            rows(
                n,
                "INSERT INTO project_events (project_id, event_id, event_type, stream_index,"
                    + " occurred_at_ms, event, recorded_at_ms)"
                    + " SELECT 'p1', '"
                    + tag
                    + "-' || i, 'task.completed', 0, "
                    + at
                    + ", '{}', "
                    + at
                    + " FROM n"),
        true,
        Settings.defaults().with(Settings.PROJECT_EVENTS_KEEP, keep));
  }

  @DatabaseTest
  void theDailyTickDeletesMetricPointsPastPlatformMetricsKeep() {
    Duration keep = Duration.ofDays(2);
    oldRowsGo(
        "platform_metrics",
        keep,
        (n, tag, at) ->
            rows(
                n,
                "INSERT INTO platform_metrics (binding, name, value, event_id, recorded_at_ms)"
                    + " SELECT 'EVENT_METRICS', 'event', 1, '"
                    + tag
                    + "-' || i, "
                    + at
                    + " FROM n"),
        true,
        Settings.defaults().with(Settings.PLATFORM_METRICS_KEEP, keep));
  }

  @DatabaseTest
  void theDailyTickDeletesBatchFailuresPastTheClaimsHorizon() {
    oldRowsGo(
        "k2_batch_failures",
        Duration.ofDays(14),
        (n, tag, at) ->
            rows(
                n,
                "INSERT INTO k2_batch_failures (consumer, batch_key, stream_index, failures,"
                    + " first_failed_at_ms, last_failed_at_ms)"
                    + " SELECT 'causal-router', '"
                    + tag
                    + "-' || i, 0, 1, "
                    + at
                    + ", "
                    + at
                    + " FROM n"),
        true,
        Settings.defaults());
  }

  @DatabaseTest
  void theDailyTickDeletesClosedDeadLettersPastTheirHorizonAndKeepsOpenOnes() {
    Duration keep = Duration.ofDays(20);
    long created = clock.millis();
    rows(
        3,
        "INSERT INTO dead_letters (command_id, kind, command, reason, status, created_at_ms)"
            + " SELECT 'open-' || i, 'command', '{}', 'boom', 'open', "
            + created
            + " FROM n");
    oldRowsGo(
        "dead_letters",
        keep,
        (n, tag, at) ->
            rows(
                n,
                "INSERT INTO dead_letters (command_id, kind, command, reason, status, resolution,"
                    + " resolved_at_ms, created_at_ms) SELECT '"
                    + tag
                    + "-' || i, 'command',"
                    + " '{}', 'boom', 'closed', 'dismissed', "
                    + at
                    + ", "
                    + created
                    + " FROM n"),
        true,
        Settings.defaults().with(Settings.DEAD_LETTERS_KEEP_CLOSED, keep));
    assertThat(count("dead_letters", "open"))
        .as("an open dead letter waits for its operator")
        .isEqualTo(3);
  }

  @DatabaseTest
  void theDailyTickDeletesCommandCountsOfDaysBeforeYesterday() {
    clock.set(Instant.parse("2026-12-02T04:17:00Z"));
    rows(
        OLD,
        "INSERT INTO causal_command_counts (change_id, day_utc, commands)"
            + " SELECT 'old-' || i, '2026-11-30', 3 FROM n");
    rows(
        FRESH,
        "INSERT INTO causal_command_counts (change_id, day_utc, commands)"
            + " SELECT 'fresh-' || i, '2026-12-01', 3 FROM n");
    rows(
        FRESH,
        "INSERT INTO causal_command_counts (change_id, day_utc, commands)"
            + " SELECT 'today-' || i, '2026-12-02', 3 FROM n");

    BatchedPurge.Result purge =
        maintenance(Settings.defaults())
            .runDaily(clock.instant())
            .purge("causal_command_counts")
            .orElseThrow();

    assertThat(purge.deleted()).as("every count of a day before yesterday").isEqualTo(OLD);
    assertThat(purge.largestBatch()).isEqualTo(SEED_BATCH);
    assertThat(count("causal_command_counts", "old")).isZero();
    assertThat(count("causal_command_counts", "fresh")).as("yesterday's stay").isEqualTo(FRESH);
    assertThat(count("causal_command_counts", "today")).as("the cap's own day").isEqualTo(FRESH);
  }

  @DatabaseTest
  void theDailyTickDeletesClefFlashDecisionsPastTheClaimsHorizon() {
    oldRowsGo(
        "model_routes",
        Duration.ofDays(14),
        (n, tag, at) ->
            rows(
                n,
                "INSERT INTO model_routes (event_id, task_id, agent_id, change_id, decision,"
                    + " reason, latency_ms, decided_at_ms) SELECT '"
                    + tag
                    + "-' || i, 't1', 'a1', 'c1', 'wake', 'overlap', 12, "
                    + at
                    + " FROM n"),
        true,
        Settings.defaults());
  }

  @DatabaseTest
  void theDailyTickDeletesEndedWorkflowsWithTheirStepsAndKeepsRunningOnes() {
    Duration keep = Duration.ofDays(15);
    long started = clock.millis();
    workflows(3, "running", "running", started);
    BatchedPurge.Result purge =
        oldRowsGo(
            "workflow_instances",
            keep,
            (n, tag, at) -> {
              // Half completed, half failed: both are ended.
              workflows(n / 2, tag + "-c", "completed", at);
              workflows(n - n / 2, tag + "-f", "failed", at);
            },
            true,
            Settings.defaults().with(Settings.WORKFLOWS_KEEP_ENDED, keep));
    assertThat(purge.table()).isEqualTo("workflow_instances");
    assertThat(count("workflow_steps", "old")).as("the steps go with their instance").isZero();
    assertThat(count("workflow_steps", "fresh")).isEqualTo(2L * FRESH);
    assertThat(count("workflow_instances", "running"))
        .as("a running Workflow stays however old")
        .isEqualTo(3);
    assertThat(count("workflow_steps", "running")).isEqualTo(2L * 3);
  }

  /** {@code n} instances in {@code state} last updated at {@code atMs}, with two steps each. */
  private void workflows(int n, String tag, String state, long atMs) {
    rows(
        n,
        "INSERT INTO workflow_instances (instance_id, workflow_type, state, input, created_at_ms,"
            + " updated_at_ms) SELECT '"
            + tag
            + "-' || i, 'verification', '"
            + state
            + "', '{}', "
            + atMs
            + ", "
            + atMs
            + " FROM n");
    for (String step : List.of("compose", "verify")) {
      rows(
          n,
          "INSERT INTO workflow_steps (instance_id, step_name, position, result, completed_at_ms)"
              + " SELECT '"
              + tag
              + "-' || i, '"
              + step
              + "', 0, 'null', "
              + atMs
              + " FROM n");
    }
  }

  @DatabaseTest
  void theReleaseSweepPurgesToo() {
    oldRowsGo(
        "processed_events",
        Duration.ofDays(14),
        claims("causal-router"),
        false,
        Settings.defaults());
  }

  /** Claims of {@code consumer}. */
  private Rows claims(String consumer) {
    return (n, tag, at) ->
        rows(
            n,
            "INSERT INTO processed_events (consumer, event_id, processed_at_ms) SELECT '"
                + consumer
                + "', '"
                + tag
                + "-' || i, "
                + at
                + " FROM n");
  }

  /** Writes {@code n} rows at {@code atMs} whose key starts with {@code tag}. */
  @FunctionalInterface
  private interface Rows {
    void write(int n, String tag, long atMs);
  }

  /** Runs {@code insertSelect}, a SELECT over {@code n(i)} for i = 1 .. count. */
  private void rows(int count, String insertSelect) {
    database.inTransaction(
        tx ->
            tx.update(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < "
                    + count
                    + ") "
                    + insertSelect));
  }

  private long count(String table, String tag) {
    String key =
        switch (table) {
          case "processed_events", "project_events", "platform_metrics", "model_routes" ->
              "event_id";
          case "workflow_instances", "workflow_steps" -> "instance_id";
          case "k2_batch_failures" -> "batch_key";
          case "causal_command_counts" -> "change_id";
          default -> "command_id";
        };
    return database.read(
        tx ->
            tx.queryLong(
                "SELECT COUNT(*) FROM " + table + " WHERE " + key + " LIKE ?", tag + "-%"));
  }
}
