package org.rhumbatron.coordinator.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rhumbatron.coordinator.CoordinatorFixture;
import org.rhumbatron.coordinator.LogCapture;
import org.rhumbatron.coordinator.NumberedEvents;
import org.rhumbatron.coordinator.OutboxRows;
import org.rhumbatron.coordinator.StreamContents;
import org.rhumbatron.coordinator.actor.ActorAddress;
import org.rhumbatron.faults.NatsStoreDamage;
import org.rhumbatron.platform.cluster.Duty;
import org.rhumbatron.platform.cluster.FencedException;
import org.rhumbatron.platform.cluster.FreezableClock;
import org.rhumbatron.platform.cluster.KickRelay;
import org.rhumbatron.platform.cluster.LeasedOwnership;
import org.rhumbatron.platform.cluster.TestNodes;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.eventlog.EventLogException;
import org.rhumbatron.platform.eventlog.EventLogTransport;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.testkit.Fixtures;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServer;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * Two nodes on one PostgreSQL database and one nats-server: the node that lost a stream's duty
 * while paused (a zombie) cannot record the rows it sent as published, nor fire an alarm of the
 * stream's actors; the new holder does both, under its epoch. A node that takes a stream over
 * repairs a tail the server lost before it publishes.
 */
class TwoNodeCoordinatorTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.postgres();

  private static final Duration LEASE = TestNodes.LEASE;
  private static final int EVENTS = 20;
  private static final int LOST = 8;
  private static final int WAITING = 5;
  private final SettableClock clock = CoordinatorFixture.clockAt("2026-03-01T10:00:00Z");

  @RegisterExtension
  @Order(Fixtures.LAST)
  final Fixtures<CoordinatorFixture> nodes = new Fixtures<>();

  /** How node A leaves the stream. */
  enum Departure {
    /** A stops cleanly and hands its duties over at once. */
    STOPS,
    /** A dies (SIGKILL): its connection is gone, and its lease lapses. */
    DIES
  }

  // node-a's view of time: frozen when a test pauses it, so its work goes on as a zombie's.
  private final FreezableClock aTime = new FreezableClock();

  private CoordinatorFixture node(String id) throws Exception {
    return node(id, UnaryOperator.identity());
  }

  /** Node {@code id}, whose coordinator sees the event log through {@code transport}. */
  private CoordinatorFixture node(String id, UnaryOperator<EventLogTransport> transport)
      throws Exception {
    CoordinatorFixture f =
        CoordinatorFixture.startNode(
            database.database().url(),
            nats.url(),
            clock,
            Settings.defaults(),
            db -> TestNodes.ownership(db, id, id.equals("node-a") ? aTime : Clock.systemUTC()),
            transport);
    return nodes.add(f);
  }

  private static LeasedOwnership leases(CoordinatorFixture f) {
    return (LeasedOwnership) f.ownership;
  }

  /** Starts both nodes, waits until they share the duties, and names a project {@code a} holds. */
  private static String settledProjectOf(CoordinatorFixture a, CoordinatorFixture b) {
    TestNodes.startSharing(a.ownership, b.ownership);
    return TestNodes.projectHeldBy(a.ownership, "p-zombie");
  }

  @Test
  void rowsCommittedOnTheOtherNodeReachTheHolderThroughTheKickRelay() throws Exception {
    CoordinatorFixture a = node("node-a");
    CoordinatorFixture b = node("node-b");
    String p = settledProjectOf(a, b);
    // No outbox poll and no alarm ticker here: only a relayed kick makes a publish these rows.
    for (CoordinatorFixture f : List.of(a, b)) {
      KickRelay relay = KickRelay.start(f.nats, f.coordinator.publisher()::kickHeld);
      f.coordinator.publisher().forwardKicks(relay::send);
    }
    b.coordinator.root(p).createProject("tenant-1", "Demo").join();
    List<Event> events =
        IntStream.range(0, 5).mapToObj(i -> b.changeEvent(p, "c1", "t1", i)).toList();
    b.coordinator.changeEvents().appendChangeEvents(p, "c1", events).join();

    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> states(a, p).stream().allMatch("published"::equals));
    assertThat(StreamContents.eventIdsOf(a.nats, p)).hasSize(6);
    assertThat(b.coordinator.publisher().publishedCount())
        .as("b does not hold the stream")
        .isZero();
  }

  @Test
  void aZombieCannotFireAnAlarmAndTheNewHolderFiresItOnce() throws Exception {
    CoordinatorFixture a = node("node-a");
    CoordinatorFixture b = node("node-b");
    String p = settledProjectOf(a, b);
    Duty duty = Duty.ofProject(p);
    ActorAddress root = a.coordinator.root(p).address();
    a.db.inTransaction(
        tx -> {
          a.coordinator.runtime().alarms().set(tx, root, clock.instant());
          return null;
        });
    assertThat(b.coordinator.runtime().fireDueAlarms()).as("not b's to fire").isZero();

    leases(a).suspend(); // paused past its lease
    aTime.freeze();
    await().atMost(LEASE.plusSeconds(5)).until(() -> b.ownership.owns(duty));
    assertThat(a.ownership.owns(duty)).as("the zombie still believes it holds it").isTrue();
    assertThat(a.coordinator.runtime().fireDueAlarms()).as("the zombie's fire").isZero();
    assertThat(a.ownership.fencedWrites()).isEqualTo(1);
    assertThat(a.coordinator.runtime().alarmFires()).isZero();

    assertThat(b.coordinator.runtime().fireDueAlarms()).isEqualTo(1);
    assertThat(b.coordinator.runtime().fireDueAlarms()).as("fired once").isZero();
  }

  @Test
  void aZombieCannotRecordWhatItSentAndTheNewHolderPublishesUnderItsEpoch() throws Exception {
    CoordinatorFixture a = node("node-a");
    CoordinatorFixture b = node("node-b");
    String p = settledProjectOf(a, b);
    int stream = EventStreams.streamIndex(p);
    Duty duty = Duty.stream(stream);
    long epoch = leases(a).epoch(duty).orElseThrow();

    // Rows wait while both publishers hold their sends.
    a.coordinator.publisher().pause();
    b.coordinator.publisher().pause();
    a.coordinator.root(p).createProject("tenant-1", "Demo").join();
    List<Event> events =
        IntStream.range(0, 20).mapToObj(i -> a.changeEvent(p, "c1", "t1", i)).toList();
    a.coordinator.changeEvents().appendChangeEvents(p, "c1", events).join();
    assertThat(states(a, p)).containsOnly("pending").hasSize(21);

    leases(a).suspend(); // paused past its lease
    aTime.freeze();
    await().atMost(LEASE.plusSeconds(5)).until(() -> b.ownership.owns(duty));
    assertThat(leases(b).epoch(duty)).contains(epoch + 1);

    // The zombie still believes it holds the stream: it sends, and its record is refused.
    assertThat(a.ownership.owns(duty)).isTrue();
    a.coordinator.publisher().resume();
    assertThatThrownBy(() -> a.coordinator.publisher().publishDueOnLane(stream).join())
        .hasRootCauseInstanceOf(FencedException.class);
    assertThat(states(a, p)).as("nothing of the zombie's record lands").containsOnly("pending");
    assertThat(a.ownership.owns(duty)).isFalse();
    assertThat(a.ownership.fencedWrites()).isEqualTo(1);
    assertThat(a.coordinator.publisher().publishDueOnLane(stream).join().published())
        .as("stepped down: it sends no more")
        .isZero();

    b.coordinator.publisher().resume();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              b.coordinator.publisher().publishDueOnLane(stream).join();
              return states(b, p).stream().allMatch("published"::equals);
            });
    List<Long> epochs =
        b.db.read(
            tx ->
                tx.query(
                    "SELECT epoch FROM outbox WHERE project_id = ? ORDER BY seq",
                    rs -> rs.getLong(1),
                    p));
    assertThat(epochs).hasSize(21).containsOnly(epoch + 1);
    assertThat(StreamContents.eventIdsOf(b.nats, p)).hasSize(21).doesNotHaveDuplicates();
  }

  /** Where node A left stream {@link #TAIL_PROJECT}'s: the stream ends {@link #LOST} short. */
  private static final String TAIL_PROJECT = "takeover-tail-0";

  private static final int TAIL_STREAM = EventStreams.streamIndex(TAIL_PROJECT);
  private static final long LAST = EVENTS + 1;

  /**
   * Node A alone publishes project.created and {@link #EVENTS} Events, then commits {@link
   * #WAITING} more that it does not send, and leaves as {@code departure} says; the server crashes
   * too and comes back without the stream's last {@link #LOST} messages. Returns A's epoch.
   */
  private long aLeavesALostTail(Departure departure) throws Exception {
    CoordinatorFixture a = node("node-a");
    a.ownership.start(); // alone: A holds every duty
    long epochOfA = leases(a).epoch(Duty.stream(TAIL_STREAM)).orElseThrow();
    publish(a, TAIL_PROJECT, 0, EVENTS);
    await().atMost(Duration.ofSeconds(20)).until(() -> OutboxRows.unpublished(a.db) == 0);
    assertThat(a.transport.lastSequence(TAIL_STREAM)).isEqualTo(LAST);
    a.coordinator.publisher().pause();
    publish(a, TAIL_PROJECT, EVENTS, WAITING);
    assertThat(OutboxRows.unpublished(a.db)).isEqualTo(WAITING);
    if (departure == Departure.STOPS) {
      a.ownership.close(); // hands its duties over
    } else {
      leases(a).suspend(); // no heartbeat, no renewal, no release
      aTime.freeze();
    }
    a.coordinator.close();
    a.nats.close();
    NatsServer server = nats.server();
    server.kill();
    Path streamDir = server.streamDir(EventStreams.streamName(TAIL_STREAM));
    assertThat(NatsStoreDamage.cutLastMessages(streamDir, LOST)).hasSize(LOST);
    server.restart();
    return epochOfA;
  }

  private static Set<String> lostIds() {
    return IntStream.range(EVENTS - LOST, EVENTS)
        .mapToObj(n -> NumberedEvents.idOf(TAIL_PROJECT, n))
        .collect(Collectors.toSet());
  }

  /** Every Event of the project on the stream once, in commit order. */
  private static void assertWholeStreamInOrder(CoordinatorFixture f) throws Exception {
    List<Event> onStream = StreamContents.eventsOf(f.nats, TAIL_PROJECT);
    assertThat(onStream.stream().map(Event::eventId))
        .as("every Event of the project once")
        .doesNotHaveDuplicates()
        .hasSize(1 + EVENTS + WAITING);
    assertThat(onStream.stream().map(NumberedEvents::numberOf).filter(n -> n >= 0))
        .as("in commit order")
        .containsExactlyElementsOf(IntStream.range(0, EVENTS + WAITING).boxed().toList());
  }

  /**
   * Node A publishes a stream; the server then loses the stream's acknowledged tail while A goes
   * away, so A never repairs it. Node B takes the stream over, and before it publishes it runs the
   * repair a node runs at start: the lost Events are on the stream again, each once, sent by B
   * under its epoch, and ahead of the Events A committed but had not sent.
   */
  @ParameterizedTest
  @EnumSource(Departure.class)
  void theNodeThatTakesAStreamOverSendsItsLostTailAgain(Departure departure) throws Exception {
    Duty duty = Duty.stream(TAIL_STREAM);
    String streamName = EventStreams.streamName(TAIL_STREAM);
    long epochOfA = aLeavesALostTail(departure);

    CoordinatorFixture b;
    try (LogCapture log = LogCapture.of(LostTailRepair.class)) {
      b = node("node-b");
      assertThat(b.transport.lastSequence(TAIL_STREAM)).isEqualTo(LAST - LOST);
      assertThat(StreamContents.eventIdsOf(b.nats, TAIL_PROJECT))
          .doesNotContainAnyElementsOf(lostIds());
      b.ownership.start();
      await().atMost(LEASE.plusSeconds(10)).until(() -> b.ownership.owns(duty));

      await().atMost(Duration.ofSeconds(20)).until(() -> OutboxRows.unpublished(b.db) == 0);
      assertThat(log.messages())
          .containsExactly(
              streamName
                  + " lost its tail: "
                  + LOST
                  + " published events (sequences "
                  + (LAST - LOST + 1)
                  + ".."
                  + LAST
                  + ") go out again");
    }
    assertWholeStreamInOrder(b);
    long epochOfB = leases(b).epoch(duty).orElseThrow();
    assertThat(epochOfB).isGreaterThan(epochOfA);
    List<Long> resentEpochs =
        b.db.read(
            tx ->
                tx.query(
                    "SELECT epoch FROM outbox WHERE project_id = ? AND state = 'published'"
                        + " AND stream_seq > ?",
                    rs -> rs.getLong(1),
                    TAIL_PROJECT,
                    LAST - LOST));
    assertThat(resentEpochs)
        .as("the lost ones and the waiting ones, sent by B")
        .hasSize(LOST + WAITING)
        .containsOnly(epochOfB);
  }

  /**
   * While the repair after a takeover cannot read the stream's tail (JetStream does not answer),
   * the new holder sends nothing on the stream, not even when a run is asked for; once the tail
   * reads, the repair runs and everything goes out in commit order.
   */
  @Test
  void aStreamTakenOverSendsNothingBeforeItsTailIsRepaired() throws Exception {
    aLeavesALostTail(Departure.STOPS);
    AtomicBoolean unreadable = new AtomicBoolean(true);
    AtomicInteger refused = new AtomicInteger();
    CoordinatorFixture b = node("node-b", real -> tailReadsRefusedWhile(real, unreadable, refused));
    b.ownership.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> refused.get() >= 2); // tried, and again
    assertThat(b.coordinator.publisher().publishDueOnLane(TAIL_STREAM).join().published())
        .as("a run asked for before the repair sends nothing")
        .isZero();
    assertThat(OutboxRows.unpublished(b.db)).isEqualTo(WAITING);

    unreadable.set(false);
    await().atMost(Duration.ofSeconds(20)).until(() -> OutboxRows.unpublished(b.db) == 0);
    assertWholeStreamInOrder(b);
  }

  /** {@code real}, whose fill of read-past sequences fails while {@code unreadable} is set. */
  private static EventLogTransport tailReadsRefusedWhile(
      EventLogTransport real, AtomicBoolean unreadable, AtomicInteger refused) {
    return (EventLogTransport)
        Proxy.newProxyInstance(
            EventLogTransport.class.getClassLoader(),
            new Class<?>[] {EventLogTransport.class},
            (proxy, method, args) -> {
              if (method.getName().equals("fillReadPastSequences") && unreadable.get()) {
                refused.incrementAndGet();
                throw new EventLogException("JetStream does not answer (test)", null);
              }
              try {
                return method.invoke(real, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  /** Numbered Change Events {@code from..from+count-1} of {@code p}, after project.created. */
  private void publish(CoordinatorFixture f, String p, int from, int count) {
    if (from == 0) {
      assertThat(f.coordinator.root(p).createProject("tenant-1", p).join()).isTrue();
    }
    for (int n = from; n < from + count; n++) { // one transaction each: outbox order is n's order
      f.coordinator
          .changeEvents()
          .appendChangeEvents(
              p, NumberedEvents.changeOf(p), List.of(NumberedEvents.event(p, n, clock.instant())))
          .join();
    }
  }

  private static List<String> states(CoordinatorFixture f, String p) {
    return f.db.read(
        tx ->
            tx.query(
                "SELECT state FROM outbox WHERE project_id = ? ORDER BY seq",
                rs -> rs.getString(1),
                p));
  }
}
