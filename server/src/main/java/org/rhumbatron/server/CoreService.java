package org.rhumbatron.server;

import io.nats.client.Connection;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.coordinator.outbox.StreamNudges;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.natsserver.PrivateNatsServer;
import org.rhumbatron.router.EventRouter;
import org.rhumbatron.router.causal.ClefFlash;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs core, wired by {@link CoreWiring}: NATS (own or private), the JetStream topology, the
 * database, the coordinator (actors, outboxes, publisher), the queues, the event router and the
 * HTTP server.
 */
public final class CoreService implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(CoreService.class);
  static final Duration ALARM_TICK = Duration.ofMillis(250);
  static final Duration UNLOAD_IDLE_AFTER = Duration.ofMinutes(10);

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
  private final AutoCloseable tracingInstalled;
  private final AutoCloseable tracing;
  private final CountDownLatch closed = new CountDownLatch(1);
  private final AtomicBoolean closing = new AtomicBoolean();

  private CoreService(CoreWiring w) {
    this.dataLock = w.dataLock;
    this.sqliteLock = w.sqliteLock;
    this.privateNats = w.privateNats;
    this.database = w.database;
    this.ownership = w.ownership;
    this.clefFlash = w.clefFlash;
    this.coordinator = w.coordinator;
    this.queues = w.queues;
    this.lifecycle = w.lifecycle;
    this.natsSide = w.natsSide;
    this.natsWait = w.natsWait;
    this.http = w.http;
    this.tracingInstalled = w.tracingInstalled;
    this.tracing = w.tracing;
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
    CoreWiring w = new CoreWiring(config, clock, nudges);
    w.lockDataDir();
    try {
      w.startTracing();
      w.connectNats();
      w.openDatabase();
      w.startCoordinator();
      w.wireLifecycle();
      Exception startFailed = w.startNatsSide();
      w.startHttp();
      w.waitForNats(startFailed);
      CoreService service = new CoreService(w);
      started.accept(service);
      w.logUp();
      return service;
    } catch (RuntimeException | IOException | InterruptedException e) {
      w.closeAfterFailure();
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

  /** The API's base URL as Agents and webhooks are told it ({@code http.public-url}). */
  public String publicUrl() {
    return http.publicUrl();
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
    CoreWiring.closeQuietly(natsWait); // a start it runs may still add a router and consumers
    natsSide.stopStarting();
    // The duties go next, so another node takes them over at once; what this node still writes
    // under them meanwhile is fenced.
    CoreWiring.closeQuietly(
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
        dataLock, // the directory is free once its nats-server and database are closed
        tracingInstalled,
        tracing); // last: sends the spans still buffered, those of the stop included
    log.info("core stopped");
    closed.countDown();
  }

  /** True once the HTTP port is closed, the last step of {@link #close()} a client can see. */
  boolean httpClosed() {
    return http.closed();
  }
}
