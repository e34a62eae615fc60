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
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import org.rhumbatron.api.AuthFailures;
import org.rhumbatron.coordinator.outbox.OutboxPublisher;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.router.EventRouter;
import org.rhumbatron.router.causal.ModelRoute;
import org.rhumbatron.router.deadletter.DeadLetter;
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
  // The chart sampler reads the meters too.
  final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final JvmGcMetrics gc = new JvmGcMetrics();
  private final Supplier<Connection> nats;
  private final Database database;
  private final Clock clock;
  private final Duration refreshEvery;
  private final long startedAtMs;
  private MetricReads reads = MetricReads.UNKNOWN;
  private long readAtNanos;

  private CoreMetrics(
      Supplier<Connection> nats, Database database, Clock clock, Duration refreshEvery) {
    this.nats = nats;
    this.database = database;
    this.clock = clock;
    this.refreshEvery = refreshEvery;
    this.startedAtMs = clock.millis();
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

    m.gauge(
        "rhumbatron.outbox.backlog", "Outbox rows not yet published", MetricReads::outboxBacklog);
    m.gauge("rhumbatron.outbox.failed", "Outbox rows failed for good", MetricReads::outboxFailed);
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
      Gauge.builder("rhumbatron.queue.depth", m, x -> x.read(MetricReads::queueDepth, q, 0))
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
        MetricReads::falseWakeups);
    m.counter(
        "rhumbatron.causal.commands.dropped",
        "Router commands over a Change's daily cap (causal_command_dropped points), since start",
        MetricReads::commandsDropped);
    for (ModelRoute.Reason reason : ModelRoute.Reason.values()) {
      FunctionCounter.builder(
              "rhumbatron.clef.flash.decisions", m, x -> x.read(MetricReads::routes, reason, 0))
          .description(
              "Clef-flash decisions on prefix overlaps (model_route points) by reason, since start")
          .tag("reason", reason.wireName())
          .register(r);
    }
    m.gauge(
        "rhumbatron.clef.flash.calls.today",
        "Model calls Clef-flash reserved this UTC day (clef_flash_calls)",
        MetricReads::clefFlashCallsToday);
    Gauge.builder("rhumbatron.nats.connected", nats, c -> MetricReads.connected(c.get()) ? 1 : 0)
        .description("1 while core's NATS connection is up")
        .register(r);
    return m;
  }

  /** Counts the API's refused requests by reason. */
  void bindAuth(AuthFailures failures) {
    for (AuthFailures.Reason reason : AuthFailures.Reason.values()) {
      FunctionCounter.builder("rhumbatron.api.refused", failures, f -> f.count(reason))
          .description(
              "API requests refused since start: no or a bad credential (failed"
                  + " authentications), a role that may not, or over the rate limit")
          .tag("reason", reason.wireName())
          .register(registry);
    }
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

  private void gauge(String name, String description, ToDoubleFunction<MetricReads> value) {
    Gauge.builder(name, this, m -> value.applyAsDouble(m.reads()))
        .description(description)
        .register(registry);
  }

  private void counter(String name, String description, ToDoubleFunction<MetricReads> value) {
    FunctionCounter.builder(name, this, m -> value.applyAsDouble(m.reads()))
        .description(description)
        .register(registry);
  }

  private void lag(String stream, String consumer) {
    Gauge.builder(
            "rhumbatron.consumer.lag",
            this,
            m -> m.read(MetricReads::consumerPending, stream + "/" + consumer, Double.NaN))
        .description("Messages of the stream not yet delivered to the consumer (num_pending)")
        .tags("stream", stream, "consumer", consumer)
        .register(registry);
  }

  private void deadLetters(String kind, String queue) {
    Gauge.builder(
            "rhumbatron.dead.letters.open",
            this,
            m -> m.read(MetricReads::deadLettersOpen, kind + "/" + queue, 0))
        .description("Open dead letters by kind and origin queue")
        .tags("kind", kind, "queue", queue)
        .register(registry);
  }

  /**
   * One value of a map of the reads: NaN when the map could not be read, {@code absent} when it has
   * no such key.
   */
  private <K> double read(Function<MetricReads, Map<K, Long>> map, K key, double absent) {
    Map<K, Long> values = map.apply(reads());
    if (values == null) {
      return Double.NaN;
    }
    Long v = values.get(key);
    return v == null ? absent : v;
  }

  private synchronized MetricReads reads() {
    long now = System.nanoTime();
    if (readAtNanos == 0 || now - readAtNanos >= refreshEvery.toNanos()) {
      reads = MetricReads.ofDatabase(database, clock, startedAtMs).withNats(nats.get());
      readAtNanos = System.nanoTime();
    }
    return reads;
  }
}
