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
import org.rhumbatron.router.EventRouter;
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

  private final CoreParts parts;
  private final CountDownLatch closed = new CountDownLatch(1);
  private final AtomicBoolean closing = new AtomicBoolean();

  private CoreService(CoreParts parts) {
    this.parts = parts;
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
      CoreService service = new CoreService(w.parts());
      started.accept(service);
      w.logUp();
      return service;
    } catch (RuntimeException | IOException | InterruptedException e) {
      w.closeAfterFailure();
      throw e;
    }
  }

  public Coordinator coordinator() {
    return parts.coordinator();
  }

  /** The entry point of the Change lifecycle. */
  public Lifecycle lifecycle() {
    return parts.lifecycle();
  }

  public Database database() {
    return parts.database();
  }

  /** The NATS connection, or null while core waits for NATS. */
  public Connection nats() {
    return parts.natsSide().connection();
  }

  /** The event router, or null while core waits for NATS. */
  EventRouter router() {
    return parts.natsSide().router();
  }

  /** True once what needs NATS runs: at once, or when NATS came after a start without it. */
  boolean natsStarted() {
    return parts.natsSide().started();
  }

  CommandQueues queues() {
    return parts.queues();
  }

  /** Which duties this core holds (several cores on one PostgreSQL database). */
  public DutyOwnership ownership() {
    return parts.ownership();
  }

  public int httpPort() {
    return parts.http().port();
  }

  /** The API's base URL as Agents and webhooks are told it ({@code http.public-url}). */
  public String publicUrl() {
    return parts.http().publicUrl();
  }

  /** Every HTTP route, as {@code METHOD /path/{param}}. */
  java.util.List<String> httpRoutes() {
    return parts.http().routes();
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
    HttpServer http = parts.http();
    NatsSide natsSide = parts.natsSide();
    http.stopTaking(
        "core node " + parts.ownership().nodeId() + " is stopping: retry, on another node");
    CoreWiring.closeQuietly(parts.natsWait()); // a start it runs may still add router, consumers
    natsSide.stopStarting();
    // The duties go next, so another node takes them over at once; what this node still writes
    // under them meanwhile is fenced.
    CoreWiring.closeQuietly(
        parts.ownership(),
        natsSide.router(),
        parts.clefFlash(),
        parts.queues(),
        natsSide.consumers(),
        parts.coordinator(),
        parts.database(),
        natsSide.connection(),
        http, // answers 503 until here: a client sees a refused connection only once it stopped
        parts.privateNats(),
        parts.sqliteLock(),
        parts.dataLock(), // the directory is free once its nats-server and database are closed
        parts.tracingInstalled(),
        parts.tracing()); // last: sends the spans still buffered, those of the stop included
    log.info("core stopped");
    closed.countDown();
  }

  /** True once the HTTP port is closed, the last step of {@link #close()} a client can see. */
  boolean httpClosed() {
    return parts.http().closed();
  }
}
