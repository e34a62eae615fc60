package org.rhumbatron.server;

import io.nats.client.Connection;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.rhumbatron.api.Api;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.coordinator.outbox.StreamNudges;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.platform.cluster.Cluster;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.config.SettingsException;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.DatabaseOptions;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.natsserver.PrivateNatsServer;
import org.rhumbatron.router.EventRouter;
import org.rhumbatron.router.causal.ClefFlash;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wires and runs core: NATS (own or private), the JetStream topology, the database, the coordinator
 * (actors, outboxes, publisher), the queues, the event router and the HTTP server.
 */
public final class CoreService implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(CoreService.class);
  private static final Duration ALARM_TICK = Duration.ofMillis(250);
  private static final Duration UNLOAD_IDLE_AFTER = Duration.ofMinutes(10);

  private final DataDirLock dataLock;
  private final DataDirLock sqliteLock;
  private final PrivateNatsServer privateNats;
  private final Database database;
  private final DutyOwnership ownership;
  private final ClefFlash clefFlash;
  private final Coordinator coordinator;
  private final CommandQueues queues;
  private final Lifecycle lifecycle;
  private final NatsSide natsSide;
  private final NatsStartWait natsWait;
  private final HttpServer http;
  private final CountDownLatch closed = new CountDownLatch(1);
  private final AtomicBoolean closing = new AtomicBoolean();

  private CoreService(
      DataDirLock dataLock,
      DataDirLock sqliteLock,
      PrivateNatsServer privateNats,
      Database database,
      DutyOwnership ownership,
      Coordinator coordinator,
      CommandQueues queues,
      Lifecycle lifecycle,
      NatsSide natsSide,
      NatsStartWait natsWait,
      ClefFlash clefFlash,
      HttpServer http) {
    this.clefFlash = clefFlash;
    this.dataLock = dataLock;
    this.sqliteLock = sqliteLock;
    this.privateNats = privateNats;
    this.database = database;
    this.ownership = ownership;
    this.coordinator = coordinator;
    this.queues = queues;
    this.lifecycle = lifecycle;
    this.natsSide = natsSide;
    this.natsWait = natsWait;
    this.http = http;
  }

  public static CoreService start(CoreConfig config) throws IOException, InterruptedException {
    return start(config, service -> {});
  }

  /** Starts core; {@code started} sees the service before core logs that it is up. */
  static CoreService start(CoreConfig config, java.util.function.Consumer<CoreService> started)
      throws IOException, InterruptedException {
    return start(config, Clock.systemUTC(), StreamNudges.NONE, started);
  }

  /**
   * Starts core. With {@code --nats} and {@code nats.wait-at-start} (the default) a server that
   * does not answer yet is no error: core serves its API and commits to the outbox, and starts what
   * needs NATS (topology, queues, router) once it connects; else the first connect fails fast.
   */
  public static CoreService start(
      CoreConfig config,
      Clock clock,
      StreamNudges nudges,
      java.util.function.Consumer<CoreService> started)
      throws IOException, InterruptedException {
    Files.createDirectories(config.dataDir());
    // Before anything opens the directory's NATS store or SQLite file.
    DataDirLock dataLock = DataDirLock.acquire(config.dataDir());
    String nodeId = Cluster.nodeId(config.settings());
    // SQLite is one node, wherever its file lies; refused before anything is started or written.
    DataDirLock sqliteLock;
    try {
      java.util.Optional<java.nio.file.Path> sqlite = Database.sqliteFile(config.databaseUrl());
      sqliteLock = sqlite.isPresent() ? DataDirLock.sqlite(sqlite.get(), nodeId) : null;
    } catch (IOException | RuntimeException e) {
      closeQuietly(dataLock);
      throw e;
    }
    PrivateNatsServer privateNats = null;
    Connection nats = null;
    Database database = null;
    DutyOwnership ownership = null;
    Coordinator coordinator = null;
    CommandQueues queues = null;
    NatsSide natsSide = null;
    NatsStartWait natsWait = null;
    ClefFlash clefFlash = null;
    HttpServer http = null;
    try {
      String url = config.natsUrl();
      boolean mayWait = url != null && config.settings().get(Settings.NATS_WAIT_AT_START);
      if (url == null) {
        privateNats = PrivateNatsServer.start(config.dataDir(), 0);
        url = privateNats.url();
      }
      String shownUrl = NatsSide.shown(url);
      AtomicReference<Coordinator> onReconnect = new AtomicReference<>();
      Runnable recover =
          () -> {
            Coordinator c = onReconnect.get();
            if (c != null) {
              c.recoverLater();
            }
          };
      String connectTo = url;
      NatsStartWait.Connector connector =
          () -> JetStreamConnections.tryConnect(connectTo, "rhumbatron-core", recover);
      Exception notYet = null;
      if (mayWait) {
        try {
          nats = connector.connect();
        } catch (IOException e) {
          notYet = e;
        }
      } else {
        nats = JetStreamConnections.connect(url, "rhumbatron-core", recover);
      }
      database =
          Database.open(
              config.databaseUrl(),
              DatabaseOptions.builder()
                  .clock(clock)
                  // A paused node's open transaction ends with its lease, so the actors it
                  // holds go on elsewhere.
                  .idleInTransactionTimeout(config.settings().get(Settings.CLUSTER_LEASE))
                  .build());
      // The webhook and the cluster's node rows name the API's base URL, known once the HTTP
      // server has its port.
      AtomicReference<String> apiBaseUrl = new AtomicReference<>();
      // Heartbeats and leases run in real time, also when a test moves core's clock.
      ownership =
          Cluster.ownership(
              database, nodeId, config.settings(), Clock.systemUTC(), apiBaseUrl::get);
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
      String notConnected = NatsSide.notConnectedMessage(shownUrl);
      DeferredEventLog eventLog = new DeferredEventLog(notConnected);
      coordinator =
          new Coordinator(
              database,
              eventLog,
              clock,
              config.settings(),
              toRouter,
              Lifecycle.shardAlarmWork(clock, config.settings()),
              ownership);
      onReconnect.set(coordinator);
      // Before the lost-tail repair and the router: they work on the streams this node holds.
      ownership.start();
      coordinator.startAlarms(ALARM_TICK, UNLOAD_IDLE_AFTER);
      DeferredCommandTransport commandTransport = new DeferredCommandTransport(notConnected);
      queues =
          CommandQueues.create(commandTransport, coordinator, database, config.settings(), clock);
      Lifecycle lifecycle = new Lifecycle(coordinator, queues.commands(), clock, config.settings());
      clefFlash = ClefFlash.create(database, config.settings(), System.getenv(), clock);
      natsSide =
          new NatsSide(
              config,
              clock,
              shownUrl,
              database,
              coordinator,
              eventLog,
              commandTransport,
              queues,
              lifecycle,
              clefFlash,
              nudged,
              apiBaseUrl::get);
      int waiting = -1;
      Exception startFailed = null;
      if (nats != null && mayWait) {
        try {
          waiting = natsSide.start(nats);
        } catch (SettingsException e) {
          throw e; // a setting the server cannot honour (streams.replicas): waiting does not help
        } catch (IOException | RuntimeException e) {
          // NATS answered, then timed out half way (a stalled link): wait as if it had not.
          startFailed = e;
        }
      } else if (nats != null) {
        waiting = natsSide.start(nats);
      }
      NatsSide side = natsSide;
      http =
          HttpServer.start(
              config.httpPort(),
              new Api(
                      lifecycle,
                      queues.deadLetters(),
                      database,
                      side::connection,
                      side::notReady,
                      config.settings().get(Settings.API_TOKEN))
                  .withLags(() -> side.router() == null ? null : side.router().lags())
                  .withOwnership(ownership),
              CoreMetrics.bind(
                  side::connection,
                  database,
                  coordinator.publisher(),
                  side::router,
                  queues,
                  ownership,
                  clock));
      apiBaseUrl.set("http://127.0.0.1:" + http.port());
      if (nats == null) {
        natsWait = NatsStartWait.start(connector, shownUrl, natsSide, clock, notYet, null);
      } else if (startFailed != null) {
        natsWait = NatsStartWait.start(connector, shownUrl, natsSide, clock, startFailed, nats);
      }
      CoreService service =
          new CoreService(
              dataLock,
              sqliteLock,
              privateNats,
              database,
              ownership,
              coordinator,
              queues,
              lifecycle,
              natsSide,
              natsWait,
              clefFlash,
              http);
      started.accept(service);
      if (natsWait == null) {
        log.info(
            "core is up: nats {}, http port {}, database {}, {} streams resumed, node {}",
            shownUrl,
            http.port(),
            database,
            waiting,
            ownership.nodeId());
      } else {
        log.info(
            "core is up without NATS: http port {}, database {}, node {}; the queues and the"
                + " router start when NATS at {} answers",
            http.port(),
            database,
            ownership.nodeId(),
            shownUrl);
      }
      return service;
    } catch (RuntimeException | IOException | InterruptedException e) {
      closeQuietly(natsWait);
      if (natsSide != null) {
        natsSide.stopStarting();
      }
      closeQuietly(
          http,
          ownership,
          natsSide == null ? null : natsSide.router(),
          clefFlash,
          queues,
          natsSide == null ? null : natsSide.consumers(),
          coordinator,
          database,
          natsSide == null || natsSide.connection() == null ? nats : natsSide.connection(),
          privateNats,
          sqliteLock,
          dataLock);
      throw e;
    }
  }

  public Coordinator coordinator() {
    return coordinator;
  }

  /** The entry point of the Change lifecycle. */
  public Lifecycle lifecycle() {
    return lifecycle;
  }

  public Database database() {
    return database;
  }

  /** The NATS connection, or null while core waits for NATS. */
  public Connection nats() {
    return natsSide.connection();
  }

  /** The event router, or null while core waits for NATS. */
  EventRouter router() {
    return natsSide.router();
  }

  /** True once what needs NATS runs: at once, or when NATS came after a start without it. */
  boolean natsStarted() {
    return natsSide.started();
  }

  CommandQueues queues() {
    return queues;
  }

  /** Which duties this core holds (several cores on one PostgreSQL database). */
  public DutyOwnership ownership() {
    return ownership;
  }

  public int httpPort() {
    return http.port();
  }

  /** Every HTTP route, as {@code METHOD /path/{param}}. */
  java.util.List<String> httpRoutes() {
    return http.routes();
  }

  public String natsUrl() {
    Connection nats = nats();
    return nats == null ? null : nats.getConnectedUrl();
  }

  public void awaitClose() throws InterruptedException {
    closed.await();
  }

  @Override
  public void close() {
    if (!closing.compareAndSet(false, true)) {
      return;
    }
    log.info("core is stopping");
    // First the API: what arrives from now on is a 503 to retry elsewhere, what it took ends.
    http.stopTaking("core node " + ownership.nodeId() + " is stopping: retry, on another node");
    closeQuietly(natsWait); // a start it runs may still add a router and consumers
    natsSide.stopStarting();
    // The duties go next, so another node takes them over at once; what this node still writes
    // under them meanwhile is fenced.
    closeQuietly(
        ownership,
        natsSide.router(),
        clefFlash,
        queues,
        natsSide.consumers(),
        coordinator,
        database,
        natsSide.connection(),
        http, // answers 503 until here: a client sees a refused connection only once it stopped
        privateNats,
        sqliteLock,
        dataLock); // last: the directory is free once its nats-server and database are closed
    log.info("core stopped");
    closed.countDown();
  }

  /** True once the HTTP port is closed, the last step of {@link #close()} a client can see. */
  boolean httpClosed() {
    return http.closed();
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
