package org.rhumbatron.bench;

import static org.rhumbatron.bench.BenchRounds.each;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nats.client.Connection;
import io.nats.client.JetStreamManagement;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.platform.eventlog.EventLogClient;
import org.rhumbatron.platform.eventlog.JetStreamEventLog;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.router.EventRouter;
import org.rhumbatron.router.causal.CausalBatchRouter;
import org.rhumbatron.router.run.BatchOutcome;
import org.rhumbatron.router.run.SubscriptionHandler;

/**
 * The router benchmark: events per second from the stream to the applied projection
 * (project-view-projector, then causal-router, driven by nudges) on one stream and on 8, beside the
 * raw fetch + ack rate of a bare pull consumer on the same messages in the same run, and the
 * publish-to-applied latency on the nudge path, under load and on idle streams. It purges the 8
 * event streams and deletes their router consumers before and after; on a server that is not its
 * own it first refuses streams that hold messages or consumers, unless allowed to purge them.
 */
final class RouterBench {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String natsUrl;
  private final String dbUrl;
  private final int count;
  private final int projectsPerStream;

  /** The latency phase's highest publish rate (events per second). */
  static final double MAX_LATENCY_RATE = 20_000;

  /**
   * The idle phase's rate: an Event every 50 ms, round the 8 streams, so each stream's next one
   * comes 400 ms after the last and finds the stream's lane and consumers idle.
   */
  static final double IDLE_RATE = 20;

  private final int latencySeconds;
  private final int rounds;
  private final boolean purgeAllowed;
  private final Clock clock = Clock.systemUTC();
  private final EnvelopeCodec codec = new EnvelopeCodec();
  private final Map<String, Long> appliedAtNanos = new ConcurrentHashMap<>();
  // The number of the next Event the bench makes: each one is new.
  private long nextEvent;

  RouterBench(
      String natsUrl,
      String dbUrl,
      int count,
      int projectsPerStream,
      int latencySeconds,
      int rounds,
      boolean purgeAllowed) {
    this.natsUrl = natsUrl;
    this.dbUrl = dbUrl;
    this.count = count;
    this.projectsPerStream = projectsPerStream;
    this.latencySeconds = latencySeconds;
    this.rounds = rounds;
    this.purgeAllowed = purgeAllowed;
  }

  String run() throws Exception {
    Settings settings = Settings.defaults();
    try (Connection nats = JetStreamConnections.connect(natsUrl, "rhumbatron-bench-router")) {
      JetStreamManagement jsm = nats.jetStreamManagement();
      if (!purgeAllowed) {
        refuseKeptEvents(jsm); // before the bench changes anything on the server or in --db
      }
      new JetStreamTopology(nats, settings).ensure();
      clearEventStreams(jsm);
      try (Database db = Database.open(dbUrl)) {
        return measure(nats, db, settings);
      } finally {
        clearEventStreams(jsm); // as it found them: the next run on this server is not refused
      }
    }
  }

  /** The warm-up, the measured rounds and the latency phase; returns the JSON. */
  private String measure(Connection nats, Database db, Settings settings) throws Exception {
    JetStreamEventLog log = JetStreamEventLog.bind(nats);
    SubscriptionHandler idle = new AckAll();
    // The phases before the overlap phase route nothing: only the claims and the projection.
    AtomicReference<CausalBatchRouter> causal = new AtomicReference<>(CausalBatchRouter.NO_RULES);
    // The view actors run on the coordinator's actor pool, as in `rhumbatron core`.
    try (Coordinator coordinator =
            Coordinator.wiring()
                .database(db)
                .transport(log)
                .clock(clock)
                .settings(settings)
                .wire();
        EventRouter router =
            EventRouter.wiring()
                .eventLog(new EventLogClient(nats, codec, settings))
                .database(db)
                .views(coordinator::view)
                .rules(recording(causal))
                .auditArchiver(idle)
                .analyticsProjector(idle)
                .commands(c -> {}) // no maintenance tick runs in the benchmark
                .clock(clock)
                .settings(settings)
                .wire()) {
      List<List<String>> projects = RouterEvents.projects(projectsPerStream);
      int payloadBytes = codec.encodeEvent(RouterEvents.event(projects.get(0).get(0), 0)).length;

      Map<String, List<RouterPhase>> measured = measureRounds(nats, log, router, projects);
      double oneStream =
          BenchRounds.median(each(measured.get("router_one_stream"), RouterPhase::perSecond));
      long[] latencies = latency(router, log, projects, Math.max(50, oneStream / 2));
      long[] idleLatencies = latency(router, log, projects, IDLE_RATE);
      ObjectNode overlapOut =
          overlap(nats, db, coordinator, settings, causal, router, log, oneStream);

      ObjectNode out =
          new RouterReport(natsUrl, count, projectsPerStream)
              .json(db, payloadBytes, measured, latencies, idleLatencies, overlapOut);
      return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(out);
    }
  }

  /**
   * Round 0 and the measured rounds: the same messages for the bare consumers and the router on one
   * stream, then the router on all 8; each phase by its name in {@link #PHASES}.
   */
  private Map<String, List<RouterPhase>> measureRounds(
      Connection nats, JetStreamEventLog log, EventRouter router, List<List<String>> projects)
      throws Exception {
    List<Integer> all = new ArrayList<>();
    for (int s = 0; s < EventStreams.STREAM_COUNT; s++) {
      all.add(s);
    }
    Map<String, List<RouterPhase>> measured = new LinkedHashMap<>();
    PHASES.forEach(phase -> measured.put(phase, new ArrayList<>()));
    // Round 0 warms up the JIT, the database and the consumers; rounds 1.. are measured.
    for (int r = 0; r <= rounds; r++) {
      // One stream: the same messages for the bare consumer and for the router.
      // Each target is read before its publish: a run still queued from the phase before may
      // take some of the new events before the drive starts.
      long oneTarget = appliedAtNanos.size() + count;
      publish(log, RouterEvents.on(List.of(0), projects, count, nextEvent));
      nextEvent += count;
      RouterPhase raw = RouterPhase.measure(() -> BareConsumers.fetchAck(nats, count));
      RouterPhase rawTwo = RouterPhase.measure(() -> BareConsumers.twoSubscriptions(nats, count));
      RouterPhase oneStream =
          RouterPhase.measure(() -> drive(router, List.of(0), oneTarget, count));
      long eightTarget = appliedAtNanos.size() + count;
      publish(log, RouterEvents.on(all, projects, count, nextEvent));
      nextEvent += count;
      RouterPhase eightStreams = RouterPhase.measure(() -> drive(router, all, eightTarget, count));
      if (r > 0) {
        List<RouterPhase> round = List.of(raw, rawTwo, oneStream, eightStreams);
        for (int i = 0; i < PHASES.size(); i++) {
          measured.get(PHASES.get(i)).add(round.get(i));
        }
      }
    }
    return measured;
  }

  /**
   * The resource-overlap phase: the real causal rules route resource Events of one Project with
   * {@link OverlapPhase#AGENTS} active Agents; its rate to the one-stream router's.
   */
  private ObjectNode overlap(
      Connection nats,
      Database db,
      Coordinator coordinator,
      Settings settings,
      AtomicReference<CausalBatchRouter> causal,
      EventRouter router,
      JetStreamEventLog log,
      double oneStream)
      throws Exception {
    ObjectNode overlapOut = JSON.createObjectNode();
    try (OverlapPhase overlap = new OverlapPhase(nats, db, coordinator, clock, settings)) {
      overlap.setUp();
      causal.set(overlap.rules());
      int stream = EventStreams.streamIndex(overlap.projectId());
      List<Double> overlapRates = new ArrayList<>();
      int callsBefore = 0;
      long sentBefore = 0;
      int n = Math.min(count, OVERLAP_EVENTS);
      for (int r = 0; r <= rounds; r++) {
        List<Event> events = overlap.events(n, (long) r * n);
        if (r == 1) {
          callsBefore = overlap.modelCalls();
          sentBefore = routerCommands(db);
        }
        publish(log, events);
        RouterPhase p = RouterPhase.measure(() -> driveAll(router, stream, events));
        if (r > 0) {
          overlapRates.add(p.perSecond());
        }
      }
      double overlapRate = BenchRounds.median(overlapRates);
      overlapOut.put("active_agents", OverlapPhase.AGENTS);
      overlapOut.put("events", n);
      overlapOut.put("mix", "1/3 exact, 1/3 prefix only (Clef-flash, local API), 1/3 unrelated");
      overlapOut.put("per_s", Math.round(overlapRate));
      BenchRounds.put(overlapOut, "per_s", overlapRates);
      overlapOut.put("ratio_to_router_one_stream", BenchRounds.ratio(overlapRate, oneStream));
      overlapOut.put("model_calls", overlap.modelCalls() - callsBefore);
      overlapOut.put("commands_sent", routerCommands(db) - sentBefore);
    }
    return overlapOut;
  }

  /** Resource Events per round of the overlap phase (at most; no more than --count). */
  static final int OVERLAP_EVENTS = 3_000;

  /** Marks each fresh Event applied when {@code rules} (the current ones) routed it. */
  private CausalBatchRouter recording(AtomicReference<CausalBatchRouter> rules) {
    return new CausalBatchRouter() {
      @Override
      public CausalBatchRouter prepare(List<Event> unclaimed) {
        CausalBatchRouter batch = rules.get().prepare(unclaimed);
        return (tx, fresh) -> {
          batch.routeCausalBatch(tx, fresh);
          applied(fresh);
        };
      }

      @Override
      public boolean prepares(Event e) {
        return rules.get().prepares(e);
      }

      @Override
      public void routeCausalBatch(Tx tx, List<Event> fresh) throws SQLException {
        rules.get().routeCausalBatch(tx, fresh);
        applied(fresh);
      }
    };
  }

  private void applied(List<Event> fresh) {
    long now = System.nanoTime();
    for (Event e : fresh) {
      appliedAtNanos.putIfAbsent(e.eventId(), now);
    }
  }

  /** Nudges {@code stream} until the causal router has routed every one of {@code events}. */
  private double driveAll(EventRouter router, int stream, List<Event> events) {
    long start = System.nanoTime();
    while (events.stream().anyMatch(e -> !appliedAtNanos.containsKey(e.eventId()))) {
      router.nudge(stream);
      LockSupport.parkNanos(1_000_000);
    }
    return events.size() / ((System.nanoTime() - start) / 1e9);
  }

  /** The router's commands counted toward the cap, all Changes and days. */
  private static long routerCommands(Database db) {
    return db.read(
        tx -> tx.queryLong("SELECT COALESCE(SUM(commands), 0) FROM causal_command_counts"));
  }

  /** The measured phases of a round, in the order they run, as the JSON names them. */
  static final List<String> PHASES =
      List.of(
          "raw_fetch_ack", "raw_two_subscriptions", "router_one_stream", "router_eight_streams");

  /** Purges the 8 event streams and deletes the router's consumers and the raw one on them. */
  private static void clearEventStreams(JetStreamManagement jsm) throws Exception {
    for (int s = 0; s < EventStreams.STREAM_COUNT; s++) {
      jsm.purgeStream(EventStreams.streamName(s));
      for (Subscription sub : Subscription.values()) {
        BenchStreams.deleteConsumer(jsm, EventStreams.streamName(s), sub.durableName());
      }
    }
    for (String raw : BareConsumers.DURABLES) {
      BenchStreams.deleteConsumer(jsm, EventStreams.streamName(0), raw);
    }
  }

  /**
   * The bench purges the event streams and deletes their consumers: on a server that is not its
   * own, only when they hold nothing (or with --purge), so that it never drops a core's events.
   */
  private static void refuseKeptEvents(JetStreamManagement jsm) throws Exception {
    List<String> kept = BenchStreams.kept(jsm, BenchStreams.eventStreams());
    if (!kept.isEmpty()) {
      throw new IllegalStateException(
          "bench router purges the 8 event streams and deletes their consumers, and "
              + String.join(", ", kept)
              + ": pass --purge to allow it, or leave out --nats to run a private nats-server");
    }
  }

  /**
   * Nudges {@code streams} (as the publisher does after each send) until the causal-router, which
   * runs after the projector in each run, has seen {@code target} distinct events in all (the
   * {@code n} of this phase; a run still queued from the phase before may already have taken some).
   * Counted by event id: a transaction body may run twice (TxWork).
   */
  private double drive(EventRouter router, List<Integer> streams, long target, int n) {
    long start = System.nanoTime();
    while (appliedAtNanos.size() < target) {
      streams.forEach(router::nudge);
      LockSupport.parkNanos(1_000_000);
    }
    return n / ((System.nanoTime() - start) / 1e9);
  }

  /** One event at a time at {@code rate}, nudged after its PubAck; publish-to-applied times. */
  private long[] latency(
      EventRouter router, JetStreamEventLog log, List<List<String>> projects, double rate)
      throws Exception {
    // A phase that found its work already done measures an enormous rate; unbounded, the paced
    // publish loop would flood the connection until its output queue overflows.
    double paced = Math.min(rate, MAX_LATENCY_RATE);
    int n = (int) Math.max(100, paced * latencySeconds);
    long firstEvent = nextEvent;
    nextEvent += n;
    Map<String, Long> publishedAt = new ConcurrentHashMap<>();
    long interval = (long) (1e9 / paced);
    long next = System.nanoTime();
    List<CompletableFuture<?>> acks = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int stream = i % EventStreams.STREAM_COUNT;
      List<String> ps = projects.get(stream);
      Event e = RouterEvents.event(ps.get(i % ps.size()), firstEvent + i);
      long now;
      while ((now = System.nanoTime()) < next) {
        LockSupport.parkNanos(next - now);
      }
      next += interval;
      publishedAt.put(e.eventId(), System.nanoTime());
      acks.add(
          log.publish(stream, e.eventId(), codec.encodeEvent(e), null)
              .thenRun(() -> router.nudge(stream)));
    }
    CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).join();
    long waitUntil = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (publishedAt.keySet().stream().anyMatch(id -> !appliedAtNanos.containsKey(id))
        && System.nanoTime() < waitUntil) {
      LockSupport.parkNanos(1_000_000);
    }
    return publishedAt.entrySet().stream()
        .filter(en -> appliedAtNanos.containsKey(en.getKey()))
        .mapToLong(en -> appliedAtNanos.get(en.getKey()) - en.getValue())
        .toArray();
  }

  private void publish(JetStreamEventLog log, List<Event> events) {
    List<CompletableFuture<Long>> window = new ArrayList<>();
    for (Event e : events) {
      window.add(
          log.publish(
              EventStreams.streamIndex(e.projectId()), e.eventId(), codec.encodeEvent(e), null));
      if (window.size() == 100) {
        window.forEach(CompletableFuture::join);
        window.clear();
      }
    }
    window.forEach(CompletableFuture::join);
  }

  /** The sweep-only batches are not part of this benchmark. */
  private static final class AckAll implements SubscriptionHandler {
    @Override
    public Subscription subscription() {
      return Subscription.AUDIT_ARCHIVER;
    }

    @Override
    public BatchOutcome handle(
        int streamIndex, List<org.rhumbatron.platform.eventlog.EventRecord> r) {
      return BatchOutcome.allApplied();
    }
  }
}
