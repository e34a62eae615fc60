package org.rhumbatron.server;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.api.StreamInfoOptions;
import io.nats.client.api.Subject;
import java.io.IOException;
import java.time.Clock;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.rhumbatron.agents.WakeConsumer;
import org.rhumbatron.coordinator.outbox.OutboxRowState;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.metrics.MetricsBinding;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.router.causal.ClefFlash;
import org.rhumbatron.router.causal.CommandCap;
import org.rhumbatron.router.causal.ModelRoute;
import org.rhumbatron.router.deadletter.DeadLetterStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One refresh of what {@link CoreMetrics} reads from the database and JetStream; NaN (or a null
 * map) where it could not.
 */
record MetricReads(
    double outboxBacklog,
    double outboxFailed,
    Map<String, Long> deadLettersOpen,
    double falseWakeups,
    double commandsDropped,
    Map<ModelRoute.Reason, Long> routes,
    double clefFlashCallsToday,
    Map<String, Long> consumerPending,
    Map<Queue, Long> queueDepth) {
  private static final Logger log = LoggerFactory.getLogger(MetricReads.class);
  private static final double NAN = Double.NaN;
  static final MetricReads UNKNOWN =
      new MetricReads(NAN, NAN, null, NAN, NAN, null, NAN, null, null);

  // Points since this core started: the retention purge deletes older ones, and a counter
  // read over all of them would fall.
  private static final String POINTS =
      "SELECT COUNT(*) FROM platform_metrics WHERE binding = ? AND name = ? AND recorded_at_ms >= ?";
  private static final String ROUTES = routesSql();

  private static String routesSql() {
    StringBuilder sql = new StringBuilder("SELECT ");
    for (ModelRoute.Reason reason : ModelRoute.Reason.values()) {
      sql.append(reason.ordinal() == 0 ? "" : ", ")
          .append("SUM(CASE WHEN labels LIKE '%\"reason\":\"")
          .append(reason.wireName())
          .append("\"%' THEN 1 ELSE 0 END)");
    }
    return sql.append(
            " FROM platform_metrics WHERE binding = ? AND name = ? AND recorded_at_ms >= ?")
        .toString();
  }

  /** The database's part; the counters count what happened since {@code startedAtMs}. */
  static MetricReads ofDatabase(Database database, Clock clock, long startedAtMs) {
    String metrics = MetricsBinding.METRICS.name();
    String today = LocalDate.ofInstant(clock.instant(), ZoneOffset.UTC).toString();
    try {
      return database.read(
          tx -> {
            Map<String, Long> dead = new HashMap<>();
            tx.query(
                "SELECT kind, origin_queue, COUNT(*) FROM dead_letters WHERE status = ?"
                    + " GROUP BY kind, origin_queue",
                rs -> {
                  String queue = rs.getString(2);
                  return dead.put(
                      rs.getString(1) + "/" + (queue == null ? CoreMetrics.NO_QUEUE : queue),
                      rs.getLong(3));
                },
                DeadLetterStatus.OPEN.dbName());
            Map<ModelRoute.Reason, Long> routes = new HashMap<>();
            tx.queryFirst(
                ROUTES,
                rs -> {
                  for (ModelRoute.Reason reason : ModelRoute.Reason.values()) {
                    routes.put(reason, rs.getLong(reason.ordinal() + 1));
                  }
                  return routes;
                },
                metrics,
                ClefFlash.METRIC,
                startedAtMs);
            return new MetricReads(
                // The literal predicate lets the count walk the partial index of waiting rows.
                tx.queryLong("SELECT COUNT(*) FROM outbox WHERE " + OutboxRowState.WAITING_SQL),
                tx.queryLong(
                    "SELECT COUNT(*) FROM outbox WHERE state = ?", OutboxRowState.FAILED.dbName()),
                dead,
                tx.queryLong(POINTS, metrics, WakeConsumer.FALSE_WAKEUP, startedAtMs),
                tx.queryLong(POINTS, metrics, CommandCap.DROPPED, startedAtMs),
                routes,
                tx.queryFirst(
                        "SELECT calls FROM clef_flash_calls WHERE day_utc = ?",
                        rs -> rs.getLong(1),
                        today)
                    .orElse(0L),
                null,
                null);
          });
    } catch (RuntimeException e) {
      log.warn("metrics: cannot read the database: {}", e.toString());
      return UNKNOWN;
    }
  }

  /** Null before core first connected. */
  static boolean connected(Connection connection) {
    return connection != null && connection.getStatus() == Connection.Status.CONNECTED;
  }

  /** These reads with JetStream's; as they are while the connection is down. */
  MetricReads withNats(Connection connection) {
    if (!connected(connection)) {
      return this;
    }
    try {
      JetStreamManagement jsm = connection.jetStreamManagement();
      Map<String, Long> pending = new HashMap<>();
      for (int i = 0; i <= EventStreams.STREAM_COUNT; i++) {
        String stream =
            i < EventStreams.STREAM_COUNT ? EventStreams.streamName(i) : Queue.STREAM_NAME;
        for (ConsumerInfo c : jsm.getConsumers(stream)) {
          pending.put(stream + "/" + c.getName(), c.getNumPending());
        }
      }
      Map<Queue, Long> depth = new HashMap<>();
      List<Subject> subjects =
          jsm.getStreamInfo(
                  Queue.STREAM_NAME, StreamInfoOptions.filterSubjects(Queue.SUBJECT_PREFIX + ">"))
              .getStreamState()
              .getSubjects();
      for (Subject s : subjects == null ? List.<Subject>of() : subjects) {
        for (Queue q : Queue.values()) {
          if (q.subject().equals(s.getName())) {
            depth.put(q, s.getCount());
          }
        }
      }
      return new MetricReads(
          outboxBacklog,
          outboxFailed,
          deadLettersOpen,
          falseWakeups,
          commandsDropped,
          routes,
          clefFlashCallsToday,
          pending,
          depth);
    } catch (IOException | JetStreamApiException | RuntimeException e) {
      log.warn("metrics: cannot read JetStream: {}", e.toString());
      return this;
    }
  }
}
