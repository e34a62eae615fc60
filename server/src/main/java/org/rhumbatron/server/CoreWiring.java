package org.rhumbatron.server;

import io.nats.client.Connection;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.rhumbatron.api.Api;
import org.rhumbatron.api.ApiAccess;
import org.rhumbatron.api.ChartWindow;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.coordinator.outbox.StreamNudges;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.platform.cluster.Cluster;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.cluster.LeasedOwnership;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.config.SettingsException;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.DatabaseOptions;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.NatsCredentials;
import org.rhumbatron.platform.natsserver.PrivateNatsServer;
import org.rhumbatron.platform.tracing.Tracing;
import org.rhumbatron.router.EventRouter;
import org.rhumbatron.router.causal.ClefFlash;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds core's parts as {@link CoreService#start} asks, one step each and in that order, into an
 * immutable {@link CoreParts}; a part is null until its step ran, so a failed start closes just
 * what it made.
 */
final class CoreWiring {
  private static final Logger log = LoggerFactory.getLogger(CoreService.class);

  private final CoreConfig config;
  private final Clock clock;
  private final StreamNudges nudges;
  // The webhook and the cluster's node rows name the API's base URL, known once the HTTP server
  // has its port.
  private final AtomicReference<String> apiBaseUrl = new AtomicReference<>();
  // The publisher nudges the router, which is built after the coordinator it reads views from.
  private final AtomicReference<EventRouter> nudged = new AtomicReference<>();
  private final AtomicReference<Coordinator> onReconnect = new AtomicReference<>();
  private boolean mayWait;
  private String shownUrl;
  private NatsStartWait.Connector connector;
  private Exception notYet;
  private DeferredEventLog eventLog;
  private DeferredCommandTransport commandTransport;

  // Each step's parts, null until it ran; the built graph is the immutable CoreParts.
  private String nodeId;
  private Tracing tracing;
  private Tracing.Installed tracingInstalled;
  private DataDirLock dataLock;
  private DataDirLock sqliteLock;
  private PrivateNatsServer privateNats;
  private Connection nats;
  private Database database;
  private DutyOwnership ownership;
  private Coordinator coordinator;
  private CommandQueues queues;
  private Lifecycle lifecycle;
  private ClefFlash clefFlash;
  private NatsSide natsSide;
  private NatsStartWait natsWait;
  private HttpServer http;

  /** The streams the started router resumed; -1 while core waits for NATS. */
  private int waiting = -1;

  CoreWiring(CoreConfig config, Clock clock, StreamNudges nudges) {
    this.config = config;
    this.clock = clock;
    this.nudges = nudges;
  }

  /** The data directory, and a SQLite file wherever it lies, as this node's alone. */
  void lockDataDir() throws IOException {
    Files.createDirectories(config.dataDir());
    // Before anything opens the directory's NATS store or SQLite file.
    dataLock = DataDirLock.acquire(config.dataDir());
    nodeId = Cluster.nodeId(config.settings());
    // SQLite is one node, wherever its file lies; refused before anything is started or written.
    try {
      Optional<Path> sqlite = Database.sqliteFile(config.databaseUrl());
      sqliteLock = sqlite.isPresent() ? DataDirLock.sqlite(sqlite.get(), nodeId) : null;
    } catch (IOException | RuntimeException e) {
      closeQuietly(dataLock);
      throw e;
    }
  }

  /**
   * Spans over OTLP/HTTP when {@code otel.exporter.otlp.endpoint} is set; else the process's tracer
   * stays as it is (off, unless a test installed one).
   */
  void startTracing() {
    tracing = Tracing.fromSettings(config.settings());
    tracingInstalled = tracing.enabled() ? tracing.install() : null;
  }

  /** A private nats-server without {@code --nats}; the first connect, which may not answer yet. */
  void connectNats() throws IOException, InterruptedException {
    String url = config.natsUrl();
    mayWait = url != null && config.settings().get(Settings.NATS_WAIT_AT_START);
    if (url == null) {
      privateNats = PrivateNatsServer.start(config.dataDir(), 0);
      url = privateNats.url();
    }
    shownUrl = NatsSide.shown(url);
    Runnable recover =
        () -> {
          Coordinator c = onReconnect.get();
          if (c != null) {
            c.recoverLater();
          }
        };
    String connectTo = url;
    // The private server is core's own, on loopback, and takes no credentials.
    NatsCredentials credentials =
        privateNats == null
            ? NatsCredentials.fromSettings(config.settings())
            : NatsCredentials.NONE;
    connector =
        () -> JetStreamConnections.tryConnect(connectTo, "rhumbatron-core", credentials, recover);
    if (mayWait) {
      try {
        nats = connector.connect();
      } catch (IOException e) {
        notYet = e;
      }
    } else {
      nats = JetStreamConnections.connect(url, "rhumbatron-core", credentials, recover);
    }
  }

  void openDatabase() {
    database =
        Database.open(
            config.databaseUrl(),
            DatabaseOptions.builder()
                .clock(clock)
                // A paused node's open transaction ends with its lease, so the actors it holds go
                // on elsewhere.
                .idleInTransactionTimeout(config.settings().get(Settings.CLUSTER_LEASE))
                .password(databasePassword(config.settings()))
                // A node that takes this one's duties over ends its sessions by this name.
                .applicationName(LeasedOwnership.applicationName(nodeId))
                .build());
    // Heartbeats and leases run in real time, also when a test moves core's clock.
    ownership =
        Cluster.ownership(database, nodeId, config.settings(), Clock.systemUTC(), apiBaseUrl::get);
  }

  /** database.password, or the first line of database.password-file; null: neither. */
  static String databasePassword(Settings settings) {
    String file = settings.get(Settings.DATABASE_PASSWORD_FILE);
    if (file.isEmpty()) {
      return settings.get(Settings.DATABASE_PASSWORD);
    }
    try {
      return Files.readAllLines(Path.of(file)).stream().findFirst().orElse("");
    } catch (IOException e) {
      throw new SettingsException(
          Settings.DATABASE_PASSWORD_FILE.key(),
          "cannot read " + file + ": " + e.getClass().getSimpleName());
    }
  }

  /** The coordinator with its alarms, on the duties this node holds. */
  void startCoordinator() {
    StreamNudges toRouter =
        stream -> {
          nudges.nudge(stream);
          EventRouter r = nudged.get();
          if (r != null) {
            r.nudge(stream);
          }
        };
    String notConnected = NatsSide.notConnectedMessage(shownUrl);
    eventLog = new DeferredEventLog(notConnected);
    commandTransport = new DeferredCommandTransport(notConnected);
    coordinator =
        Coordinator.wiring()
            .database(database)
            .transport(eventLog)
            .clock(clock)
            .settings(config.settings())
            .nudges(toRouter)
            .shardAlarmWork(Lifecycle.shardAlarmWork(clock, config.settings()))
            .ownership(ownership)
            .wire();
    onReconnect.set(coordinator);
    // Before the lost-tail repair and the router: they work on the streams this node holds.
    ownership.start();
    coordinator.startAlarms(CoreService.ALARM_TICK, CoreService.UNLOAD_IDLE_AFTER);
  }

  /** The queues, the lifecycle and what needs NATS, built but not started. */
  void wireLifecycle() {
    queues =
        CommandQueues.create(commandTransport, coordinator, database, config.settings(), clock);
    lifecycle = new Lifecycle(coordinator, queues.commands(), clock, config.settings());
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
  }

  /**
   * Starts what needs NATS when it answered; returns why a start that may wait failed half way
   * (null: it did not), so that core waits for NATS as if it had not answered.
   */
  Exception startNatsSide() throws IOException, InterruptedException {
    if (nats != null && mayWait) {
      try {
        waiting = natsSide.start(nats);
      } catch (SettingsException e) {
        throw e; // a setting the server cannot honour (streams.replicas): waiting does not help
      } catch (IOException | RuntimeException e) {
        // NATS answered, then timed out half way (a stalled link): wait as if it had not.
        return e;
      }
    } else if (nats != null) {
      waiting = natsSide.start(nats);
    }
    return null;
  }

  void startHttp() {
    NatsSide side = natsSide;
    HttpListen listen = HttpListen.of(config);
    ChartWindow charts = new ChartWindow(clock, ChartWindow.SPAN, ChartSampler.EVERY);
    CoreMetrics metrics =
        CoreMetrics.bind(
            side::connection,
            database,
            coordinator.publisher(),
            side::router,
            queues,
            ownership,
            clock);
    Api api =
        new Api(
                lifecycle,
                queues.deadLetters(),
                database,
                side::connection,
                side::notReady,
                new ApiAccess(
                    config.settings().get(Settings.API_TOKEN),
                    listen.readsOpen(),
                    listen.metricsClosed(),
                    config.settings().get(Settings.API_RATE_LIMIT),
                    clock))
            .withLags(() -> side.router() == null ? null : side.router().lags())
            .withOwnership(ownership)
            .withCharts(charts)
            .withWebhookSecrets(
                clock, config.settings().get(Settings.AGENT_WEBHOOK_SECRET_OVERLAP));
    listen.refuseExposure(api.hasCredential());
    metrics.bindAuth(api.authFailures());
    http = HttpServer.start(listen, api, metrics);
    http.closeWith(new ChartSampler(metrics.registry, charts, clock).start());
    apiBaseUrl.set(http.publicUrl());
  }

  /** Waits for NATS in the background when it did not answer, or its start failed half way. */
  void waitForNats(Exception startFailed) {
    if (nats == null) {
      natsWait = NatsStartWait.start(connector, shownUrl, natsSide, clock, notYet, null);
    } else if (startFailed != null) {
      natsWait = NatsStartWait.start(connector, shownUrl, natsSide, clock, startFailed, nats);
    }
  }

  /** The graph the steps built, once all of them ran. */
  CoreParts parts() {
    return new CoreParts(
        dataLock,
        sqliteLock,
        privateNats,
        database,
        ownership,
        clefFlash,
        coordinator,
        queues,
        lifecycle,
        natsSide,
        natsWait,
        http,
        tracingInstalled,
        tracing);
  }

  void logUp() {
    if (natsWait == null) {
      log.info(
          "core is up: nats {}, {}, database {}, {} streams resumed, node {}",
          shownUrl,
          http.describe(),
          database,
          waiting,
          ownership.nodeId());
    } else {
      log.info(
          "core is up without NATS: {}, database {}, node {}; the queues and the"
              + " router start when NATS at {} answers",
          http.describe(),
          database,
          ownership.nodeId(),
          shownUrl);
    }
  }

  /** After a failed start: closes what the steps made, the last made first. */
  void closeAfterFailure() {
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
        dataLock,
        tracingInstalled,
        tracing);
  }

  static void closeQuietly(AutoCloseable... parts) {
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
