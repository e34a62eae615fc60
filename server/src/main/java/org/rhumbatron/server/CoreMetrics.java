package org.rhumbatron.server;

import io.javalin.Javalin;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.api.StreamInfoOptions;
import io.nats.client.api.Subject;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import org.rhumbatron.agents.WakeConsumer;
import org.rhumbatron.coordinator.outbox.OutboxPublisher;
import org.rhumbatron.coordinator.outbox.OutboxRowState;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.platform.metrics.MetricsBinding;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.router.EventRouter;
import org.rhumbatron.router.causal.ClefFlash;
import org.rhumbatron.router.causal.CommandCap;
import org.rhumbatron.router.causal.ModelRoute;
import org.rhumbatron.router.deadletter.DeadLetter;
import org.rhumbatron.router.deadletter.DeadLetterStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Core's Prometheus metrics ({@code GET /metrics}): JVM meters, and meters read from the real state
 * (the outbox, dead letters, METRICS points, JetStream consumers and the COMMANDS stream) or from
 * the counters of the publisher, the router and the queue consumers. Database and NATS reads are
 * cached for {@link #REFRESH_EVERY}, so a scrape never costs more than one round of them; a value
 * that cannot be read (NATS down, a consumer not made yet) is NaN.
 */
final class CoreMetrics implements AutoCloseable {
  static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
  static final Duration REFRESH_EVERY = Duration.ofSeconds(2);

  /** {@code queue} label of an event-batch dead letter, which has no origin queue. */
  static final String NO_QUEUE = "none";

  private static final Logger log = LoggerFactory.getLogger(CoreMetrics.class);
  // Points since this core started: the retention purge deletes older ones, and a counter
  // read over all of them would fall.
  private static final String POINTS =
      "SELECT COUNT(*) FROM platform_metrics WHERE binding = ? AND name = ? AND recorded_at_ms >= ?";

  // The chart sampler reads the meters too.
  final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final JvmGcMetrics gc = new JvmGcMetrics();
  private final Supplier<Connection> nats;
  private final Database database;
  private final Clock clock;
  private final Duration refreshEvery;
  private final String routesSql;
  private final long startedAtMs;
  private Reads reads = Reads.UNKNOWN;
  private long readAtNanos;

  /** What one refresh read; NaN where it could not. */
  private record Reads(
      double outboxBacklog,
      double outboxFailed,
      Map<String, Long> deadLettersOpen,
      double falseWakeups,
      double commandsDropped,
      Map<ModelRoute.Reason, Long> routes,
      double clefFlashCallsToday,
      Map<String, Long> consumerPending,
      Map<Queue, Long> queueDepth) {
    static final double NAN = Double.NaN;
    static final Reads UNKNOWN = new Reads(NAN, NAN, null, NAN, NAN, null, NAN, null, null);
  }

  private CoreMetrics(
      Supplier<Connection> nats, Database database, Clock clock, Duration refreshEvery) {
    this.nats = nats;
    this.database = database;
    this.clock = clock;
    this.refreshEvery = refreshEvery;
    this.startedAtMs = clock.millis();
    StringBuilder sql = new StringBuilder("SELECT ");
    for (ModelRoute.Reason reason : ModelRoute.Reason.values()) {
      sql.append(reason.ordinal() == 0 ? "" : ", ")
          .append("SUM(CASE WHEN labels LIKE '%\"reason\":\"")
          .append(reason.wireName())
          .append("\"%' THEN 1 ELSE 0 END)");
    }
    this.routesSql =
        sql.append(" FROM platform_metrics WHERE binding = ? AND name = ? AND recorded_at_ms >= ?")
            .toString();
  }

  /** Zero (applied) or NaN (age) while core waits for NATS and has no router. */
  private static double applied(EventRouter router, Subscription s) {
    return router == null ? 0 : router.appliedCount(s);
  }

  private static double age(EventRouter router, int stream, Subscription s) {
    return router == null ? Double.NaN : router.lags().oldestUnreadAgeSeconds(stream, s);
  }

  /** Binds the JVM meters and core's meters over these parts of a running core. */
  static CoreMetrics bind(
      Supplier<Connection> nats,
      Database database,
      OutboxPublisher publisher,
      Supplier<EventRouter> router,
      CommandQueues queues,
      DutyOwnership ownership,
      Clock clock) {
    CoreMetrics m = new CoreMetrics(nats, database, clock, REFRESH_EVERY);
    MeterRegistry r = m.registry;
    new ClassLoaderMetrics().bindTo(r);
    new JvmMemoryMetrics().bindTo(r);
    m.gc.bindTo(r);
    new JvmThreadMetrics().bindTo(r);
    new ProcessorMetrics().bindTo(r);
    new UptimeMetrics().bindTo(r);

    m.gauge("rhumbatron.outbox.backlog", "Outbox rows not yet published", Reads::outboxBacklog);
    m.gauge("rhumbatron.outbox.failed", "Outbox rows failed for good", Reads::outboxFailed);
    FunctionCounter.builder(
            "rhumbatron.outbox.send.failures", publisher, OutboxPublisher::failedSendCount)
        .description("Sends to the event log that failed, since start")
        .register(r);
    FunctionCounter.builder(
            "rhumbatron.events.published", publisher, OutboxPublisher::publishedCount)
        .description("Outbox rows published to the event streams, since start")
        .register(r);
    FunctionCounter.builder(
            "rhumbatron.cluster.ownership.changes", ownership, DutyOwnership::ownershipChanges)
        .description("Duties this node took, handed over or lost, since start")
        .register(r);
    FunctionCounter.builder(
            "rhumbatron.cluster.fenced.writes", ownership, DutyOwnership::fencedWrites)
        .description("Duty writes the fence refused on this node (it had lost the duty)")
        .register(r);
    for (Subscription s : Subscription.values()) {
      FunctionCounter.builder("rhumbatron.events.applied", router, x -> applied(x.get(), s))
          .description("Event records a subscription applied and acked, since start")
          .tag("consumer", s.durableName())
          .register(r);
      for (int i = 0; i < EventStreams.STREAM_COUNT; i++) {
        m.lag(EventStreams.streamName(i), s.durableName());
        int stream = i;
        Gauge.builder("rhumbatron.consumer.oldest.unread.age", router, x -> age(x.get(), stream, s))
            .description(
                "Seconds since the oldest Event the consumer has not acknowledged was stored"
                    + " (0 when none), as core last sampled it")
            .tags("stream", EventStreams.streamName(i), "consumer", s.durableName())
            .baseUnit("seconds")
            .strongReference(true) // the supplier lambda: nothing else holds it
            .register(r);
      }
    }
    for (Queue q : Queue.values()) {
      m.lag(Queue.STREAM_NAME, q.durableName());
      Gauge.builder("rhumbatron.queue.depth", m, x -> x.read(Reads::queueDepth, q, 0))
          .description("Messages on cmd.<queue> of the COMMANDS stream")
          .tag("queue", q.wireName())
          .register(r);
      FunctionCounter.builder("rhumbatron.queue.retries", queues, x -> x.retries(q))
          .description("Deliveries nacked with a retry delay, since start")
          .tag("queue", q.wireName())
          .register(r);
      FunctionCounter.builder("rhumbatron.queue.handled", queues, x -> x.handled(q))
          .description("Commands the queue's consumers handled, since start")
          .tag("queue", q.wireName())
          .register(r);
      if (q.hasDeadLetterQueue()) {
        m.deadLetters(DeadLetter.KIND_COMMAND, q.wireName());
      }
    }
    m.deadLetters(DeadLetter.KIND_EVENT_BATCH, NO_QUEUE);
    m.counter(
        "rhumbatron.false.wakeups",
        "Stale agent wakes (false_wakeup points), since start",
        Reads::falseWakeups);
    m.counter(
        "rhumbatron.causal.commands.dropped",
        "Router commands over a Change's daily cap (causal_command_dropped points), since start",
        Reads::commandsDropped);
    for (ModelRoute.Reason reason : ModelRoute.Reason.values()) {
      FunctionCounter.builder(
              "rhumbatron.clef.flash.decisions", m, x -> x.read(Reads::routes, reason, 0))
          .description(
              "Clef-flash decisions on prefix overlaps (model_route points) by reason, since start")
          .tag("reason", reason.wireName())
          .register(r);
    }
    m.gauge(
        "rhumbatron.clef.flash.calls.today",
        "Model calls Clef-flash reserved this UTC day (clef_flash_calls)",
        Reads::clefFlashCallsToday);
    Gauge.builder("rhumbatron.nats.connected", nats, c -> connected(c.get()) ? 1 : 0)
        .description("1 while core's NATS connection is up")
        .register(r);
    return m;
  }

  /** Adds {@code GET /metrics}; the metrics close with the server. */
  static void mount(Javalin app, CoreMetrics metrics) {
    app.get("/metrics", ctx -> ctx.contentType(CONTENT_TYPE).result(metrics.scrape()));
    app.events(
        e -> {
          e.serverStopped(metrics::close);
          e.serverStartFailed(metrics::close);
        });
  }

  /** The Prometheus text exposition of every meter. */
  String scrape() {
    return registry.scrape();
  }

  @Override
  public void close() {
    gc.close();
    registry.close();
  }

  private void gauge(String name, String description, ToDoubleFunction<Reads> value) {
    Gauge.builder(name, this, m -> value.applyAsDouble(m.reads()))
        .description(description)
        .register(registry);
  }

  private void counter(String name, String description, ToDoubleFunction<Reads> value) {
    FunctionCounter.builder(name, this, m -> value.applyAsDouble(m.reads()))
        .description(description)
        .register(registry);
  }

  private void lag(String stream, String consumer) {
    Gauge.builder(
            "rhumbatron.consumer.lag",
            this,
            m -> m.read(Reads::consumerPending, stream + "/" + consumer, Double.NaN))
        .description("Messages of the stream not yet delivered to the consumer (num_pending)")
        .tags("stream", stream, "consumer", consumer)
        .register(registry);
  }

  private void deadLetters(String kind, String queue) {
    Gauge.builder(
            "rhumbatron.dead.letters.open",
            this,
            m -> m.read(Reads::deadLettersOpen, kind + "/" + queue, 0))
        .description("Open dead letters by kind and origin queue")
        .tags("kind", kind, "queue", queue)
        .register(registry);
  }

  /**
   * One value of a map of the reads: NaN when the map could not be read, {@code absent} when it has
   * no such key.
   */
  private <K> double read(Function<Reads, Map<K, Long>> map, K key, double absent) {
    Map<K, Long> values = map.apply(reads());
    if (values == null) {
      return Double.NaN;
    }
    Long v = values.get(key);
    return v == null ? absent : v;
  }

  private synchronized Reads reads() {
    long now = System.nanoTime();
    if (readAtNanos == 0 || now - readAtNanos >= refreshEvery.toNanos()) {
      Reads db = readDatabase();
      reads = readNats(db);
      readAtNanos = System.nanoTime();
    }
    return reads;
  }

  private Reads readDatabase() {
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
                      rs.getString(1) + "/" + (queue == null ? NO_QUEUE : queue), rs.getLong(3));
                },
                DeadLetterStatus.OPEN.dbName());
            Map<ModelRoute.Reason, Long> routes = new HashMap<>();
            tx.queryFirst(
                routesSql,
                rs -> {
                  for (ModelRoute.Reason reason : ModelRoute.Reason.values()) {
                    routes.put(reason, rs.getLong(reason.ordinal() + 1));
                  }
                  return routes;
                },
                metrics,
                ClefFlash.METRIC,
                startedAtMs);
            return new Reads(
                tx.queryLong(
                    "SELECT COUNT(*) FROM outbox WHERE state IN (?, ?)",
                    OutboxRowState.PENDING.column(),
                    OutboxRowState.RETRY_WAIT.column()),
                tx.queryLong(
                    "SELECT COUNT(*) FROM outbox WHERE state = ?", OutboxRowState.FAILED.column()),
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
      return Reads.UNKNOWN;
    }
  }

  /** Null before core first connected. */
  private static boolean connected(Connection connection) {
    return connection != null && connection.getStatus() == Connection.Status.CONNECTED;
  }

  /** Adds the JetStream reads to {@code db}; none while the connection is down. */
  private Reads readNats(Reads db) {
    Connection connection = nats.get();
    if (!connected(connection)) {
      return db;
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
      return new Reads(
          db.outboxBacklog(),
          db.outboxFailed(),
          db.deadLettersOpen(),
          db.falseWakeups(),
          db.commandsDropped(),
          db.routes(),
          db.clefFlashCallsToday(),
          pending,
          depth);
    } catch (IOException | JetStreamApiException | RuntimeException e) {
      log.warn("metrics: cannot read JetStream: {}", e.toString());
      return db;
    }
  }
}
