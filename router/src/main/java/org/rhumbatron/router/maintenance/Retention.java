package org.rhumbatron.router.maintenance;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;
import org.rhumbatron.lifecycle.LifecycleRetention;
import org.rhumbatron.platform.cluster.Duty;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.config.Setting;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.BatchedPurge;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.router.deadletter.DeadLetterStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The horizons of the tables the event router's side writes with every Event: each purge deletes
 * every row past its horizon in batches of at most {@code processed-events.purge-max} (the seed's
 * 5,000). Other owners purge their own tables: the outbox (coordinator's OutboxJanitor) and
 * queue_handler_runs (the queue consumer at start); the lifecycle's {@code model_routes} and ended
 * Workflows go through {@link LifecycleRetention}.
 */
final class Retention {
  private static final Logger log = LoggerFactory.getLogger(Retention.class);

  /**
   * One table's horizon: rows matching {@code condition} whose {@code timeColumn} is older than
   * {@code keep} before the tick; a {@code dayColumn} holds a UTC day (yyyy-mm-dd), not epoch ms.
   */
  record Horizon(
      String table,
      String timeColumn,
      String condition,
      Function<Settings, Duration> keep,
      boolean dayColumn) {
    Horizon(String table, String timeColumn, String condition, Setting<Duration> keep) {
      this(table, timeColumn, condition, s -> s.get(keep), false);
    }

    String where() {
      return (condition == null ? "" : condition + " AND ") + timeColumn + " < ?";
    }

    Object before(Instant now, Settings settings) {
      Instant horizon = now.minus(keep.apply(settings));
      return dayColumn
          ? LocalDate.ofInstant(horizon, ZoneOffset.UTC).toString()
          : horizon.toEpochMilli();
    }
  }

  // The command cap reads only the current UTC day's row; the day before stays, for a core whose
  // clock is a little behind around midnight.
  private static final Duration CAP_DAYS_KEPT = Duration.ofDays(1);

  static final List<Horizon> HORIZONS =
      List.of(
          // The seed's "Deletes ... processed_events rows after 14 days".
          new Horizon("processed_events", "processed_at_ms", null, Settings.PROCESSED_EVENTS_KEEP),
          new Horizon("project_events", "recorded_at_ms", null, Settings.PROJECT_EVENTS_KEEP),
          new Horizon("platform_metrics", "recorded_at_ms", null, Settings.PLATFORM_METRICS_KEEP),
          // A batch's failure count matters only while the stream can deliver the batch again
          // (events.max-age, which processed-events.keep is never below).
          new Horizon(
              "k2_batch_failures", "last_failed_at_ms", null, Settings.PROCESSED_EVENTS_KEEP),
          // Open dead letters wait for an operator; closed ones only record how they ended.
          new Horizon(
              "dead_letters",
              "resolved_at_ms",
              DeadLetterStatus.CLOSED_CONDITION,
              Settings.DEAD_LETTERS_KEEP_CLOSED),
          new Horizon("causal_command_counts", "day_utc", null, s -> CAP_DAYS_KEPT, true));

  private final Database database;
  private final Settings settings;
  private final DutyOwnership ownership;

  Retention(Database database, Settings settings, DutyOwnership ownership) {
    this.database = database;
    this.settings = settings;
    this.ownership = ownership;
  }

  /** Purges every table of {@link #HORIZONS} up to its horizon before {@code now}. */
  List<BatchedPurge.Result> purge(Instant now) {
    int batch = settings.get(Settings.PROCESSED_EVENTS_PURGE_MAX);
    List<BatchedPurge.Result> results = new ArrayList<>();
    for (Horizon h : HORIZONS) {
      Object before = h.before(now, settings);
      BatchedPurge.Result r;
      try {
        r =
            BatchedPurge.run(
                database,
                tx -> ownership.fence(tx, Duty.SWEEP),
                h.table(),
                h.where(),
                h.timeColumn(),
                batch,
                before);
      } catch (RuntimeException e) { // the next tick goes on from where this one stopped
        log.warn("purge of {} failed: {}", h.table(), e.toString());
        continue;
      }
      if (r.deleted() > 0) {
        log.info(
            "deleted {} {} rows before {} in {} batches",
            r.deleted(),
            h.table(),
            h.dayColumn() ? before : Instant.ofEpochMilli((Long) before),
            r.batches());
      }
      results.add(r);
    }
    // The lifecycle's own tables, deleted by their owner.
    owned(
        results,
        "model_routes",
        () ->
            LifecycleRetention.modelRoutes(
                database,
                tx -> ownership.fence(tx, Duty.SWEEP),
                now.minus(settings.get(Settings.PROCESSED_EVENTS_KEEP)),
                batch));
    owned(
        results,
        "workflow_instances",
        () ->
            LifecycleRetention.endedWorkflows(
                database,
                tx -> ownership.fence(tx, Duty.SWEEP),
                now.minus(settings.get(Settings.WORKFLOWS_KEEP_ENDED)),
                batch));
    return results;
  }

  private static void owned(
      List<BatchedPurge.Result> results, String table, Supplier<BatchedPurge.Result> purge) {
    try {
      BatchedPurge.Result r = purge.get();
      if (r.deleted() > 0) {
        log.info("deleted {} {} rows in {} batches", r.deleted(), table, r.batches());
      }
      results.add(r);
    } catch (RuntimeException e) {
      log.warn("purge of {} failed: {}", table, e.toString());
    }
  }
}
