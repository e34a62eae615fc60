package org.rhumbatron.app;

import io.nats.client.Connection;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.rhumbatron.app.api.Api;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.coordinator.outbox.StreamNudges;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.DatabaseOptions;
import org.rhumbatron.platform.eventlog.EventLogClient;
import org.rhumbatron.platform.eventlog.JetStreamEventLog;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.platform.metrics.MetricsBinding;
import org.rhumbatron.platform.metrics.PlatformMetrics;
import org.rhumbatron.platform.natsserver.PrivateNatsServer;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.router.EventRouter;
import org.rhumbatron.router.analytics.AnalyticsProjector;
import org.rhumbatron.router.archive.ArchiveExpiry;
import org.rhumbatron.router.archive.AuditArchiver;
import org.rhumbatron.router.causal.CausalRules;
import org.rhumbatron.router.causal.ClefFlash;
import org.rhumbatron.router.causal.CommandCap;
import org.rhumbatron.router.claims.EventClaims;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wires and runs core: NATS (own or private), the JetStream topology, the database, the coordinator
 * (actors, outboxes, publisher), the queues, the event router and the HTTP server.
 */
final class CoreService implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(CoreService.class);
  private static final Duration ALARM_TICK = Duration.ofMillis(250);
  private static final Duration UNLOAD_IDLE_AFTER = Duration.ofMinutes(10);

  private final PrivateNatsServer privateNats;
  private final Connection nats;
  private final Database database;
  private final ClefFlash clefFlash;
  private final Coordinator coordinator;
  private final CommandQueues queues;
  private final Lifecycle lifecycle;
  private final LifecycleConsumers consumers;
  private final EventRouter router;
  private final HttpServer http;
  private final CountDownLatch closed = new CountDownLatch(1);
  private final AtomicBoolean closing = new AtomicBoolean();

  private CoreService(
      PrivateNatsServer privateNats,
      Connection nats,
      Database database,
      Coordinator coordinator,
      CommandQueues queues,
      Lifecycle lifecycle,
      LifecycleConsumers consumers,
      EventRouter router,
      ClefFlash clefFlash,
      HttpServer http) {
    this.clefFlash = clefFlash;
    this.privateNats = privateNats;
    this.nats = nats;
    this.database = database;
    this.coordinator = coordinator;
    this.queues = queues;
    this.lifecycle = lifecycle;
    this.consumers = consumers;
    this.router = router;
    this.http = http;
  }

  static CoreService start(CoreConfig config) throws IOException, InterruptedException {
    return start(config, service -> {});
  }

  /** Starts core; {@code started} sees the service before core logs that it is up. */
  static CoreService start(CoreConfig config, java.util.function.Consumer<CoreService> started)
      throws IOException, InterruptedException {
    return start(config, Clock.systemUTC(), StreamNudges.NONE, started);
  }

  static CoreService start(
      CoreConfig config,
      Clock clock,
      StreamNudges nudges,
      java.util.function.Consumer<CoreService> started)
      throws IOException, InterruptedException {
    Files.createDirectories(config.dataDir());
    PrivateNatsServer privateNats = null;
    Connection nats = null;
    Database database = null;
    Coordinator coordinator = null;
    CommandQueues queues = null;
    LifecycleConsumers consumers = null;
    EventRouter router = null;
    ClefFlash clefFlash = null;
    HttpServer http = null;
    try {
      String url = config.natsUrl();
      if (url == null) {
        privateNats = PrivateNatsServer.start(config.dataDir(), 0);
        url = privateNats.url();
      }
      AtomicReference<Coordinator> onReconnect = new AtomicReference<>();
      nats =
          JetStreamConnections.connect(
              url,
              "rhumbatron-core",
              () -> {
                Coordinator c = onReconnect.get();
                if (c != null) {
                  c.recoverLater();
                }
              });
      new JetStreamTopology(nats.jetStreamManagement(), config.settings()).ensure();
      database =
          Database.open(config.databaseUrl(), DatabaseOptions.builder().clock(clock).build());
      // The publisher nudges the router, which is built after the coordinator it reads views from.
      AtomicReference<EventRouter> nudged = new AtomicReference<>();
      StreamNudges toRouter =
          stream -> {
            nudges.nudge(stream);
            EventRouter r = nudged.get();
            if (r != null) {
              r.nudge(stream);
            }
          };
      coordinator =
          new Coordinator(
              database,
              JetStreamEventLog.bind(nats),
              clock,
              config.settings(),
              toRouter,
              Lifecycle.shardAlarmWork(clock, config.settings()));
      onReconnect.set(coordinator);
      int waiting = coordinator.recover();
      coordinator.startAlarms(ALARM_TICK, UNLOAD_IDLE_AFTER);
      queues = CommandQueues.start(nats, coordinator, database, config.settings(), clock);
      Lifecycle lifecycle = new Lifecycle(coordinator, queues.commands(), clock, config.settings());
      clefFlash = ClefFlash.create(database, config.settings(), System.getenv(), clock);
      router =
          startRouter(config, clock, nats, database, coordinator, queues, lifecycle, clefFlash);
      nudged.set(router);
      // The webhook names the API's base URL, known once the HTTP server has its port.
      AtomicReference<String> apiBaseUrl = new AtomicReference<>();
      consumers =
          LifecycleConsumers.start(
              queues, lifecycle, database, clock, config.settings(), apiBaseUrl::get);
      router.catchUpAfterStart();
      http =
          HttpServer.start(
              config.httpPort(),
              new Api(
                  lifecycle,
                  queues.deadLetters(),
                  database,
                  nats,
                  config.settings().get(Settings.API_TOKEN)),
              CoreMetrics.bind(nats, database, coordinator.publisher(), router, queues, clock));
      apiBaseUrl.set("http://127.0.0.1:" + http.port());
      CoreService service =
          new CoreService(
              privateNats,
              nats,
              database,
              coordinator,
              queues,
              lifecycle,
              consumers,
              router,
              clefFlash,
              http);
      started.accept(service);
      log.info(
          "core is up: nats {}, http port {}, database {}, {} streams resumed",
          url,
          http.port(),
          database,
          waiting);
      return service;
    } catch (RuntimeException | IOException | InterruptedException e) {
      closeQuietly(
          http, router, clefFlash, queues, consumers, coordinator, database, nats, privateNats);
      throw e;
    }
  }

  Coordinator coordinator() {
    return coordinator;
  }

  /** The entry point of the Change lifecycle. */
  Lifecycle lifecycle() {
    return lifecycle;
  }

  Database database() {
    return database;
  }

  Connection nats() {
    return nats;
  }

  /**
   * The event router: the projector, the causal-router with the lifecycle's rules, the sweep's
   * archiver and analytics, maintenance sending through the queues; sweeps every minute.
   */
  private static EventRouter startRouter(
      CoreConfig config,
      Clock clock,
      Connection nats,
      Database database,
      Coordinator coordinator,
      CommandQueues queues,
      Lifecycle lifecycle,
      ClefFlash clefFlash)
      throws IOException {
    Settings settings = config.settings();
    EnvelopeCodec codec = new EnvelopeCodec();
    Bucket bucket =
        settings.get(Settings.BUCKET_STORE).open(Bucket.EVIDENCE, config.dataDir(), nats, clock);
    EventRouter router =
        EventRouter.wire(
            new EventLogClient(nats, codec, settings),
            database,
            coordinator::view,
            new CausalRules(
                command -> queues.commands().send(command),
                clock,
                lifecycle,
                clefFlash,
                new CommandCap(
                    settings.get(Settings.COMMANDS_PER_CHANGE_PER_DAY),
                    clock,
                    new PlatformMetrics(database, clock, MetricsBinding.METRICS))),
            new AuditArchiver(bucket, codec),
            new AnalyticsProjector(
                database,
                new EventClaims(clock),
                new PlatformMetrics(database, clock, MetricsBinding.EVENT_METRICS),
                settings),
            command -> queues.commands().send(command).join(),
            queues.deadLetters(),
            new ArchiveExpiry(bucket, clock, settings),
            clock,
            settings);
    router.startSweeps();
    return router;
  }

  EventRouter router() {
    return router;
  }

  CommandQueues queues() {
    return queues;
  }

  int httpPort() {
    return http.port();
  }

  /** Every HTTP route, as {@code METHOD /path/{param}}. */
  java.util.List<String> httpRoutes() {
    return http.routes();
  }

  String natsUrl() {
    return nats.getConnectedUrl();
  }

  void awaitClose() throws InterruptedException {
    closed.await();
  }

  @Override
  public void close() {
    if (!closing.compareAndSet(false, true)) {
      return;
    }
    log.info("core is stopping");
    closeQuietly(
        http, router, clefFlash, queues, consumers, coordinator, database, nats, privateNats);
    log.info("core stopped");
    closed.countDown();
  }

  private static void closeQuietly(AutoCloseable... parts) {
    for (AutoCloseable part : parts) {
      if (part == null) {
        continue;
      }
      try {
        part.close();
      } catch (Exception e) {
        log.warn("while closing {}: {}", part.getClass().getSimpleName(), e.toString());
      }
    }
  }
}
