package org.rhumbatron.coordinator.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.nats.client.Connection;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.coordinator.NumberedEvents;
import org.rhumbatron.coordinator.OutboxRows;
import org.rhumbatron.coordinator.StreamContents;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.JetStreamEventLog;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.protocol.Event;

/**
 * Steady outbox load for the NATS outage tests: a coordinator wired as core wires it, a writer of
 * numbered Change Events, and the checks that every Event reached its stream once in commit order.
 */
final class OutboxLoad {
  /** One commit per project per tick: 40 state changes per second per project. */
  static final Duration TICK = Duration.ofMillis(25);

  private OutboxLoad() {}

  /** A coordinator as core wires it: real clock, alarm ticker, reconnect hook. */
  static final class Core implements AutoCloseable {
    final Database db;
    final Connection connection;
    final JetStreamEventLog transport;
    final Coordinator coordinator;

    Core(String dbUrl, String natsUrl, Settings settings) throws Exception {
      db = Database.open(dbUrl);
      Coordinator[] self = new Coordinator[1];
      connection =
          JetStreamConnections.connect(
              natsUrl,
              "outbox-load-test",
              () -> {
                if (self[0] != null) {
                  self[0].recoverLater();
                }
              });
      new JetStreamTopology(connection, settings).ensure();
      transport = JetStreamEventLog.bind(connection);
      coordinator =
          Coordinator.wiring()
              .database(db)
              .transport(transport)
              .clock(Clock.systemUTC())
              .settings(settings)
              .wire();
      self[0] = coordinator;
      coordinator.recover();
      coordinator.startAlarms(Duration.ofMillis(250), Duration.ofMinutes(10));
    }

    @Override
    public void close() throws Exception {
      coordinator.close();
      connection.close();
      db.close();
    }
  }

  /** Commits numbered Change Events, one transaction each, at a steady rate across projects. */
  static final class Writer implements AutoCloseable {
    final Coordinator coordinator;
    final List<String> projects;
    final Map<String, AtomicInteger> next = new ConcurrentHashMap<>();
    final AtomicInteger committed = new AtomicInteger();
    final List<Throwable> errors = new CopyOnWriteArrayList<>();
    final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor();

    Writer(Coordinator coordinator, List<String> projects) {
      this.coordinator = coordinator;
      this.projects = projects;
      projects.forEach(p -> next.put(p, new AtomicInteger()));
    }

    Writer start() {
      ticker.scheduleAtFixedRate(this::tick, 0, TICK.toMillis(), TimeUnit.MILLISECONDS);
      return this;
    }

    /** One commit per project; a project's counter goes up in commit order. */
    void tick() {
      List<CompletableFuture<Integer>> commits = new ArrayList<>();
      for (String p : projects) {
        int n = next.get(p).get();
        Event e = NumberedEvents.event(p, n, java.time.Instant.now());
        commits.add(
            coordinator
                .changeEvents()
                .appendChangeEvents(p, NumberedEvents.changeOf(p), List.of(e)));
      }
      for (int i = 0; i < commits.size(); i++) {
        try {
          assertThat(commits.get(i).join()).isEqualTo(1);
          next.get(projects.get(i)).incrementAndGet();
          committed.incrementAndGet();
        } catch (Throwable t) {
          errors.add(t);
        }
      }
    }

    /** {@code perProject} commits for each project, now, on the caller's thread. */
    void burst(int perProject) {
      for (int i = 0; i < perProject; i++) {
        tick();
      }
    }

    @Override
    public void close() throws InterruptedException {
      ticker.shutdown();
      assertThat(ticker.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  /** The rows around the first inversion on the stream, for the failure message. */
  private static String outOfOrder(Database db, String projectId, List<Integer> order) {
    int at =
        IntStream.range(1, order.size())
            .filter(i -> order.get(i) < order.get(i - 1))
            .findFirst()
            .orElse(-1);
    if (at < 0) {
      return "none";
    }
    Map<String, OutboxRows.Row> rows =
        OutboxRows.ofProject(db, projectId).stream()
            .collect(Collectors.toMap(OutboxRows.Row::eventId, r -> r));
    StringBuilder b = new StringBuilder("stream order ");
    for (int i = Math.max(0, at - 4); i < Math.min(order.size(), at + 4); i++) {
      OutboxRows.Row r = rows.get(NumberedEvents.idOf(projectId, order.get(i)));
      b.append(
          String.format(
              "%n  n=%d streamSeq=%d attempts=%d publishedAt=%s",
              order.get(i),
              r.streamSeq(),
              r.attempts(),
              java.time.Instant.ofEpochMilli(r.publishedAtMs())));
    }
    return b.toString();
  }

  static long countPublished(Database db) {
    return db.read(
        tx ->
            tx.queryFirst(
                    "SELECT COUNT(*) FROM outbox WHERE state = 'published'", rs -> rs.getLong(1))
                .orElse(0L));
  }

  static void awaitAllPublished(Database db, Duration atMost) {
    await()
        .atMost(atMost)
        .untilAsserted(
            () ->
                assertThat(
                        OutboxRows.all(db).stream()
                            .collect(
                                Collectors.groupingBy(
                                    OutboxRows.Row::state, Collectors.counting())))
                    .as("outbox rows by state")
                    .containsOnlyKeys("published"));
  }

  static void assertEveryEventOnceInCommitOrder(Core core, List<String> projects, Writer writer)
      throws Exception {
    for (String p : projects) {
      List<Event> events = StreamContents.eventsOf(core.connection, p);
      Map<String, Long> counts =
          events.stream().collect(Collectors.groupingBy(Event::eventId, Collectors.counting()));
      assertThat(counts.entrySet())
          .as("each Event of %s on its stream exactly once", p)
          .allMatch(e -> e.getValue() == 1);
      assertThat(events)
          .filteredOn(e -> e.eventType().wireName().equals("project.created"))
          .hasSize(1);
      int count = writer.next.get(p).get();
      List<Integer> order =
          events.stream().map(NumberedEvents::numberOf).filter(n -> n >= 0).toList();
      assertThat(order)
          .as("the Change Events of %s: all %d, once each", p, count)
          .containsExactlyInAnyOrderElementsOf(IntStream.range(0, count).boxed().toList());
      assertThat(order)
          .as(
              "the Change Events of %s in commit order; out of order: %s",
              p, outOfOrder(core.db, p, order))
          .isSorted();
    }
  }
}
