package org.rhumbatron.server;

import io.nats.client.Connection;
import java.io.IOException;
import java.time.Clock;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.cluster.KickRelay;
import org.rhumbatron.platform.cluster.OwnsEverything;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.EventLogClient;
import org.rhumbatron.platform.eventlog.JetStreamEventLog;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.platform.metrics.MetricsBinding;
import org.rhumbatron.platform.metrics.PlatformMetrics;
import org.rhumbatron.platform.queue.JetStreamCommandTransport;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.router.EventRouter;
import org.rhumbatron.router.analytics.AnalyticsProjector;
import org.rhumbatron.router.archive.ArchiveExpiry;
import org.rhumbatron.router.archive.AuditArchiver;
import org.rhumbatron.router.causal.CausalRules;
import org.rhumbatron.router.causal.ClefFlash;
import org.rhumbatron.router.claims.EventClaims;
import org.rhumbatron.router.run.RouteSpans;

/**
 * The part of core that needs a live NATS connection to start: the topology, the event log's and
 * the queues' bindings, the coordinator's recovery, the consumers and the event router. {@link
 * #start} runs at core's start, or later when core started while NATS was down; a start that failed
 * half way runs again from the first step not done.
 */
final class NatsSide {
  private final CoreConfig config;
  private final Clock clock;
  private final String shownUrl;
  private final Database database;
  private final Coordinator coordinator;
  private final DeferredEventLog eventLog;
  private final DeferredCommandTransport commandTransport;
  private final CommandQueues queues;
  private final Lifecycle lifecycle;
  private final ClefFlash clefFlash;
  private final AtomicReference<EventRouter> nudged;
  private final Supplier<String> apiBaseUrl;

  private boolean topologyEnsured;
  private boolean recovered;
  private boolean deadLettersRunning;
  private volatile Connection nats;
  private volatile EventRouter router;
  private volatile LifecycleConsumers consumers;
  private volatile boolean started;
  private boolean closed;
  private int resumedStreams;

  NatsSide(
      CoreConfig config,
      Clock clock,
      String shownUrl,
      Database database,
      Coordinator coordinator,
      DeferredEventLog eventLog,
      DeferredCommandTransport commandTransport,
      CommandQueues queues,
      Lifecycle lifecycle,
      ClefFlash clefFlash,
      AtomicReference<EventRouter> nudged,
      Supplier<String> apiBaseUrl) {
    this.config = config;
    this.clock = clock;
    this.shownUrl = shownUrl;
    this.database = database;
    this.coordinator = coordinator;
    this.eventLog = eventLog;
    this.commandTransport = commandTransport;
    this.queues = queues;
    this.lifecycle = lifecycle;
    this.clefFlash = clefFlash;
    this.nudged = nudged;
    this.apiBaseUrl = apiBaseUrl;
  }

  /** A URL for messages and logs: without the user and password of {@code nats://u:p@host}. */
  static String shown(String url) {
    return url.replaceAll("//[^/@,]*@", "//");
  }

  /** What a request that needs NATS now is told before {@link #start} is done. */
  static String notConnectedMessage(String shownUrl) {
    return "NATS at " + shownUrl + " is not connected yet";
  }

  /**
   * Starts on {@code connection} whatever is not started yet; returns how many streams the
   * publisher resumed.
   */
  synchronized int start(Connection connection) throws IOException {
    if (closed) {
      throw new IllegalStateException("core is stopping");
    }
    nats = connection;
    Settings settings = config.settings();
    if (!topologyEnsured) {
      new JetStreamTopology(nats, settings).ensure();
      topologyEnsured = true;
    }
    if (!recovered) {
      // No send before the lost-tail check: recover() lets the publisher go on.
      coordinator.publisher().pause();
      if (!eventLog.isBound()) {
        eventLog.bind(JetStreamEventLog.bind(nats));
        commandTransport.bind(new JetStreamCommandTransport(nats));
        if (!(coordinator.ownership() instanceof OwnsEverything)) {
          // Rows committed here for a stream another core holds: tell that core at once.
          KickRelay relay = KickRelay.start(nats, coordinator.publisher()::kickHeld);
          coordinator.publisher().forwardKicks(relay::send);
        }
      }
      resumedStreams = coordinator.recover();
      recovered = true;
    }
    if (!deadLettersRunning) {
      queues.start(nats);
      deadLettersRunning = true;
    }
    if (router == null) {
      router = startRouter(settings);
      nudged.set(router);
    }
    if (consumers == null) {
      int mark = queues.runningCount();
      try {
        consumers =
            LifecycleConsumers.start(
                queues, lifecycle, database, clock, settings, apiBaseUrl, coordinator.ownership());
      } catch (RuntimeException e) {
        queues.closeSince(mark); // the next try starts them all again
        throw e;
      }
    }
    if (!started) {
      router.catchUpAfterStart();
      started = true;
    }
    return resumedStreams;
  }

  boolean started() {
    return started;
  }

  /** Why a request that needs NATS cannot run now, or null when it can. */
  String notReady() {
    if (started) {
      return null;
    }
    return nats != null
        ? "core is still starting against NATS at " + shownUrl
        : notConnectedMessage(shownUrl);
  }

  /** The connection, or null before the first connect. */
  Connection connection() {
    return nats;
  }

  /** The event router, or null before {@link #start}. */
  EventRouter router() {
    return router;
  }

  /**
   * The event router: the projector, the causal-router with the lifecycle's rules, the sweep's
   * archiver and analytics, maintenance sending through the queues; sweeps every minute.
   */
  private EventRouter startRouter(Settings settings) throws IOException {
    EnvelopeCodec codec = new EnvelopeCodec();
    Bucket bucket =
        settings
            .get(Settings.BUCKET_STORE)
            .open(
                Bucket.EVIDENCE,
                config.dataDir(),
                nats,
                clock,
                settings.get(Settings.STREAM_REPLICAS));
    EventRouter r =
        EventRouter.wiring()
            .eventLog(new EventLogClient(nats, codec, settings))
            .database(database)
            .views(coordinator::view)
            .rules(
                CausalRules.of(
                    RouteSpans.inTraceOfCause(
                        Subscription.CAUSAL_ROUTER, command -> queues.commands().send(command)),
                    clock,
                    lifecycle,
                    clefFlash,
                    database,
                    settings))
            .auditArchiver(
                new AuditArchiver(
                    bucket, codec, database, new EventClaims(clock, coordinator.ownership())))
            .analyticsProjector(
                new AnalyticsProjector(
                    database,
                    new EventClaims(clock, coordinator.ownership()),
                    new PlatformMetrics(database, clock, MetricsBinding.EVENT_METRICS),
                    settings))
            .commands(command -> queues.commands().send(command).join())
            .deadLetters(queues.deadLetters())
            .archiveExpiry(new ArchiveExpiry(bucket, clock, settings))
            .clock(clock)
            .settings(settings)
            .ownership(coordinator.ownership())
            .wire();
    r.startSweeps();
    return r;
  }

  /**
   * No start after this; waits for a start in progress, so that core closes what it started. Core
   * closes the router and the consumers in its own order.
   */
  synchronized void stopStarting() {
    closed = true;
  }

  LifecycleConsumers consumers() {
    return consumers;
  }
}
