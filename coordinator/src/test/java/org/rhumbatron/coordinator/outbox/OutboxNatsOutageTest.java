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
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
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
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.db.TestDatabases;
import org.rhumbatron.testkit.nats.NatsServer;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * NATS goes down (SIGKILL) under a steady load of state changes and comes back: every commit
 * succeeds while it is down, the coordinator resumes by itself (its reconnect hook, as core wires
 * it), and every Event reaches its stream exactly once, in per-outbox commit order. A second outage
 * with the writer stopped before the restart leaves the reconnect hook alone to resume.
 */
class OutboxNatsOutageTest {
  private static final int PROJECTS = 5;

  /** One commit per project per tick: 200 state changes per second in all. */
  private static final Duration TICK = Duration.ofMillis(25);

  /** Far beyond the test's waits, so only the reconnect hook can resume publishing in time. */
  private static final Duration ALARM_BACKSTOP = Duration.ofMinutes(5);

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  /** A coordinator as core wires it: real clock, alarm ticker, reconnect hook. */
  private static final class Core implements AutoCloseable {
    final Database db;
    final Connection connection;
    final JetStreamEventLog transport;
    final Coordinator coordinator;

    Core(String dbUrl, String natsUrl) throws Exception {
      Settings settings = Settings.defaults().with(Settings.OUTBOX_ALARM_BACKSTOP, ALARM_BACKSTOP);
      db = Database.open(dbUrl);
      Coordinator[] self = new Coordinator[1];
      connection =
          JetStreamConnections.connect(
              natsUrl,
              "outage-test",
              () -> {
                if (self[0] != null) {
                  self[0].recoverLater();
                }
              });
      new JetStreamTopology(connection.jetStreamManagement(), settings).ensure();
      transport = JetStreamEventLog.bind(connection);
      coordinator = new Coordinator(db, transport, Clock.systemUTC(), settings, stream -> {});
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
  private static final class Writer implements AutoCloseable {
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

  @ParameterizedTest
  @EnumSource(TestDatabase.Kind.class)
  void natsDownUnderSteadyLoadThenBack(TestDatabase.Kind kind) throws Exception {
    NatsServer server = nats.server();
    List<String> projects =
        NumberedEvents.projects("outage-" + kind.name().toLowerCase(), PROJECTS);
    try (TestDatabase database = TestDatabases.create(kind);
        Core core = new Core(database.url(), server.url())) {
      for (String p : projects) {
        assertThat(core.coordinator.root(p).createProject("tenant-1", p).join()).isTrue();
      }
      Writer writer = new Writer(core.coordinator, projects);
      int atKill;
      int atRestart;
      try (writer) {
        writer.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> writer.committed.get() >= 300);
        await().atMost(Duration.ofSeconds(10)).until(() -> countPublished(core.db) >= 200);

        server.kill();
        System.out.println("nats-server killed at " + java.time.Instant.now());
        await().atMost(Duration.ofSeconds(10)).until(() -> !core.transport.isConnected());
        atKill = writer.committed.get();
        // Writes go on while NATS is down (about 3 s at 200/s).
        await().atMost(Duration.ofSeconds(20)).until(() -> writer.committed.get() >= atKill + 600);
        assertThat(core.transport.isConnected()).isFalse();

        server.restart();
        System.out.println("nats-server restarted at " + java.time.Instant.now());
        atRestart = writer.committed.get();
        await().atMost(Duration.ofSeconds(10)).until(core.transport::isConnected);
        await()
            .atMost(Duration.ofSeconds(20))
            .until(() -> writer.committed.get() >= atRestart + 300);
      }
      assertThat(writer.errors).as("every state change committed, NATS up or down").isEmpty();
      assertThat(atRestart - atKill).as("commits while NATS was down").isGreaterThanOrEqualTo(600);
      awaitAllPublished(core.db, Duration.ofSeconds(30));

      // Second outage: commits only while down, then the writer stays quiet. Nothing but the
      // reconnect hook kicks the publisher (the alarm backstop is minutes away).
      server.kill();
      await().atMost(Duration.ofSeconds(10)).until(() -> !core.transport.isConnected());
      writer.burst(20);
      assertThat(writer.errors).isEmpty();
      assertThat(OutboxRows.unpublished(core.db)).isEqualTo(20L * PROJECTS);
      server.restart();
      awaitAllPublished(core.db, Duration.ofSeconds(20));

      assertEveryEventOnceInCommitOrder(core, projects, writer);
      // A send that the outage cut off is not the row's fault: one attempt per row, the good one.
      assertThat(OutboxRows.all(core.db).stream().filter(r -> r.attempts() != 1).toList())
          .as("rows with a failed attempt counted against them")
          .isEmpty();
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

  private static long countPublished(Database db) {
    return db.read(
        tx ->
            tx.queryFirst(
                    "SELECT COUNT(*) FROM outbox WHERE state = 'published'", rs -> rs.getLong(1))
                .orElse(0L));
  }

  private static void awaitAllPublished(Database db, Duration atMost) {
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

  private static void assertEveryEventOnceInCommitOrder(
      Core core, List<String> projects, Writer writer) throws Exception {
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
