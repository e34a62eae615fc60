package org.rhumbatron.platform.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.DatabaseOptions;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.slf4j.LoggerFactory;

/**
 * Several nodes on one PostgreSQL database, each with its own connection pool as separate processes
 * would have: duties spread by rendezvous, a lapsed lease moves only its node's duties with a new
 * epoch, a clean stop hands over at once, and a zombie's write is refused.
 */
class LeasedOwnershipTest {
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.postgres();

  private static final Duration SHORT_LEASE = Duration.ofSeconds(2);
  private static final Duration SHORT_BEAT = Duration.ofMillis(400);
  private static final Duration SHORT_POLL = Duration.ofMillis(200);

  private final List<AutoCloseable> open = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
  }

  private record Node(LeasedOwnership ownership, Database db) {}

  private Node node(String id, Duration heartbeat, Duration lease, Duration poll) {
    return node(id, heartbeat, lease, poll, null);
  }

  /**
   * A node; with {@code idleInTransaction} its pool names its sessions as core does, so a taker can
   * end them (without, only its own session is named, and fenced writes are waited for).
   */
  private Node node(
      String id, Duration heartbeat, Duration lease, Duration poll, Duration idleInTransaction) {
    Database db =
        idleInTransaction == null
            ? Database.open(database.database().url())
            : Database.open(
                database.database().url(),
                DatabaseOptions.builder()
                    .applicationName(LeasedOwnership.applicationName(id))
                    .idleInTransactionTimeout(idleInTransaction)
                    .build());
    open.add(db);
    LeasedOwnership o =
        new LeasedOwnership(
            db, id, () -> "http://" + id + ":8080", heartbeat, lease, poll, Clock.systemUTC());
    open.add(o);
    return new Node(o, db);
  }

  private Node node(String id) {
    return node(id, SHORT_BEAT, SHORT_LEASE, SHORT_POLL);
  }

  /** The lease rows as the database has them: duty to (owner, epoch). */
  private Map<Duty, ClusterView.Lease> leases(Node any) {
    Map<Duty, ClusterView.Lease> out = new EnumMap<>(Duty.class);
    any.ownership().view().duties().forEach(l -> out.put(l.duty(), l));
    return out;
  }

  private static Set<Duty> held(Node n) {
    Set<Duty> out = new HashSet<>();
    for (Duty d : Duty.values()) {
      if (n.ownership().owns(d)) {
        out.add(d);
      }
    }
    return out;
  }

  /** Waits until the nodes hold every duty once, each some, and that holds for a few rounds. */
  private static void awaitSettled(List<Node> nodes) {
    await()
        .atMost(Duration.ofSeconds(15))
        .during(SHORT_POLL.multipliedBy(4))
        .until(() -> allHeldOnce(nodes) && nodes.stream().allMatch(n -> !held(n).isEmpty()));
  }

  /** Two settled nodes, a duty of node-a's and its epoch. */
  private record Settled(Node a, Node b, Duty duty, long epoch) {}

  /** Makes table {@code guarded} (what, epoch), starts node-a and node-b and waits for them. */
  private Settled settledWithGuardedTable() throws Exception {
    database
        .database()
        .connect()
        .createStatement()
        .execute("CREATE TABLE guarded (what TEXT NOT NULL, epoch BIGINT NOT NULL)");
    Node a = node("node-a");
    Node b = node("node-b");
    a.ownership().start();
    b.ownership().start();
    awaitSettled(List.of(a, b));
    Duty duty = held(a).iterator().next();
    return new Settled(a, b, duty, a.ownership().epoch(duty).orElseThrow());
  }

  private static boolean allHeldOnce(List<Node> nodes) {
    int total = 0;
    Set<Duty> union = new HashSet<>();
    for (Node n : nodes) {
      total += held(n).size();
      union.addAll(held(n));
    }
    return total == Duty.values().length && union.size() == Duty.values().length;
  }

  @Test
  void dutiesSpreadOverLiveNodesAndADeadNodeMovesOnlyItsOwn() {
    Node a = node("node-a");
    Node b = node("node-b");
    Node c = node("node-c");
    List<Node> nodes = List.of(a, b, c);
    nodes.forEach(n -> n.ownership().start());
    awaitSettled(nodes);
    Map<Duty, ClusterView.Lease> before = leases(a);
    Set<Duty> ofC = held(c);

    c.ownership().suspend(); // dead to the others: no heartbeat, no renewal
    await().atMost(SHORT_LEASE.plusSeconds(5)).until(() -> allHeldOnce(List.of(a, b)));

    Map<Duty, ClusterView.Lease> after = leases(a);
    for (Duty d : Duty.values()) {
      if (ofC.contains(d)) {
        assertThat(after.get(d).owner()).as(d.key()).isIn("node-a", "node-b");
        assertThat(after.get(d).epoch())
            .as(d.key() + " taken over")
            .isEqualTo(before.get(d).epoch() + 1);
      } else {
        assertThat(after.get(d).owner()).as(d.key() + " stays").isEqualTo(before.get(d).owner());
        assertThat(after.get(d).epoch()).as(d.key() + " epoch").isEqualTo(before.get(d).epoch());
      }
    }
    assertThat(a.ownership().view().nodes())
        .filteredOn(n -> n.nodeId().equals("node-c"))
        .extracting(ClusterView.Node::state)
        .containsExactly(NodeState.LOST);
  }

  @Test
  void aRestartUnderTheSameNodeIdTakesItsDutiesBackAtOnceAndFencesTheOldRun() throws Exception {
    // A long lease: only the node id may let the new run in before it expires.
    Node old = node("node-a", Duration.ofSeconds(3), Duration.ofSeconds(60), SHORT_POLL);
    old.ownership().start();
    assertThat(held(old)).hasSize(Duty.values().length);
    long epoch = old.ownership().epoch(Duty.SWEEP).orElseThrow();
    old.ownership().suspend(); // killed: nothing released

    Node again = node("node-a", Duration.ofSeconds(3), Duration.ofSeconds(60), SHORT_POLL);
    again.ownership().start();
    assertThat(held(again)).as("held once start returns").hasSize(Duty.values().length);
    assertThat(again.ownership().epoch(Duty.SWEEP)).contains(epoch + 1);
    assertThatThrownBy(() -> old.db().inTransaction(tx -> old.ownership().fence(tx, Duty.SWEEP)))
        .isInstanceOf(FencedException.class);
  }

  @Test
  void aCleanStopHandsItsDutiesOverWithinTwoSeconds() {
    // The production timings: a 15 s lease must not matter to a clean stop.
    Node a = node("node-a", Duration.ofSeconds(3), Duration.ofSeconds(15), Duration.ofMillis(500));
    Node b = node("node-b", Duration.ofSeconds(3), Duration.ofSeconds(15), Duration.ofMillis(500));
    a.ownership().start();
    b.ownership().start();
    await()
        .atMost(Duration.ofSeconds(15))
        .during(Duration.ofSeconds(1))
        .until(() -> allHeldOnce(List.of(a, b)) && !held(a).isEmpty() && !held(b).isEmpty());

    long stopped = System.nanoTime();
    a.ownership().close();
    await()
        .atMost(Duration.ofSeconds(2))
        .pollInterval(Duration.ofMillis(10))
        .until(() -> held(b).size() == Duty.values().length);
    long tookMs = (System.nanoTime() - stopped) / 1_000_000;
    LoggerFactory.getLogger(getClass()).info("clean stop to takeover: {} ms", tookMs);
    assertThat(a.ownership().view().nodes())
        .filteredOn(n -> n.nodeId().equals("node-a"))
        .extracting(ClusterView.Node::state)
        .containsExactly(NodeState.STOPPED);
  }

  @Test
  void aZombiesWriteIsRefusedAndItStepsDownOnce() throws Exception {
    Settled s = settledWithGuardedTable();
    Node a = s.a();
    Node b = s.b();
    Duty duty = s.duty();
    long epoch = s.epoch();

    Logger logger = (Logger) LoggerFactory.getLogger(LeasedOwnership.class);
    ListAppender<ILoggingEvent> logs = new ListAppender<>();
    logs.start();
    logger.addAppender(logs);
    try {
      long paused = System.nanoTime();
      a.ownership().suspend(); // paused past its lease
      await().atMost(SHORT_LEASE.plusSeconds(5)).until(() -> b.ownership().owns(duty));
      LoggerFactory.getLogger(getClass())
          .info("lease lapse to takeover: {} ms", (System.nanoTime() - paused) / 1_000_000);
      long taken = b.ownership().epoch(duty).orElseThrow();
      assertThat(taken).isEqualTo(epoch + 1);
      b.db()
          .inTransaction(
              tx ->
                  tx.update(
                      "INSERT INTO guarded VALUES ('new owner', ?)",
                      b.ownership().fence(tx, duty)));

      // Past its lease without a renewal, the zombie starts no duty work; a write it began
      // anyway (as one already under way when it paused) is refused by the fence.
      assertThat(a.ownership().owns(duty)).isFalse();
      assertThatThrownBy(
              () ->
                  a.db()
                      .inTransaction(
                          tx -> {
                            tx.update("INSERT INTO guarded VALUES ('zombie', ?)", epoch);
                            return a.ownership().fence(tx, duty);
                          }))
          .isInstanceOfSatisfying(
              FencedException.class,
              f -> {
                assertThat(f.duty()).isEqualTo(duty);
                assertThat(f.heldEpoch()).isEqualTo(epoch);
                assertThat(f.currentEpoch()).isEqualTo(epoch + 1);
              });
      long zombieRows =
          a.db().read(tx -> tx.queryLong("SELECT count(*) FROM guarded WHERE what = 'zombie'"));
      assertThat(zombieRows).as("nothing of the zombie's write lands").isZero();
      assertThat(a.ownership().owns(duty)).as("it stepped down").isFalse();
      assertThat(a.ownership().fencedWrites()).isEqualTo(1);

      // Resumed, it takes work again only through the assignment: its pick hands back to it.
      a.ownership().resume();
      await().atMost(Duration.ofSeconds(10)).until(() -> allHeldOnce(List.of(a, b)));
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> a.ownership().epoch(duty).orElse(0L) == epoch + 2);
      List<String> warns =
          logs.list.stream()
              .filter(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN)
              .map(ILoggingEvent::getFormattedMessage)
              .filter(m -> m.contains("node-a stops " + duty.key() + ":"))
              .toList();
      assertThat(warns).hasSize(1);
    } finally {
      logger.detachAppender(logs);
    }
  }

  /**
   * A fenced write in flight holds the lease row: a takeover past the lease waits for it to end, so
   * its epoch commits after everything written under the old one, while renewals go on beside it.
   */
  @Test
  void aTakeoverWaitsForTheFencedWriteInFlightAndRenewalsDoNot() throws Exception {
    Settled s = settledWithGuardedTable();

    // The test holds an advisory lock that the write waits for after its fence: a write still
    // running (not idle), so the server does not end its session.
    Connection gate = database.database().connect();
    open.add(gate);
    gate.createStatement().execute("SELECT pg_advisory_lock(4711)");
    CompletableFuture<Long> write =
        CompletableFuture.supplyAsync(
            () ->
                s.a()
                    .db()
                    .inTransaction(
                        tx -> {
                          long e = s.a().ownership().fence(tx, s.duty());
                          tx.queryFirst("SELECT pg_advisory_xact_lock(4711)", rs -> 1);
                          tx.update("INSERT INTO guarded VALUES ('old owner', ?)", e);
                          return e;
                        }));
    String waitingOn =
        "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE ?";
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> count(s.a(), waitingOn, "%pg_advisory_xact_lock(4711)%") == 1);
    // Renewals while the write is in flight pass: a lease renewed after the write began.
    Instant before = leases(s.b()).get(s.duty()).expiresAt();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> leases(s.b()).get(s.duty()).expiresAt().isAfter(before));

    s.a().ownership().suspend(); // paused past its lease, its write still open
    await()
        .atMost(SHORT_LEASE.plusSeconds(10))
        .until(() -> count(s.b(), waitingOn, "%cluster_leases%FOR UPDATE%") == 1);
    assertThat(s.b().ownership().owns(s.duty()))
        .as("no takeover while the old epoch's write is open")
        .isFalse();
    assertThat(write).isNotDone();

    gate.close(); // the write goes on and commits under its epoch; then the takeover
    assertThat(write.get(10, TimeUnit.SECONDS)).isEqualTo(s.epoch());
    await().atMost(Duration.ofSeconds(10)).until(() -> s.b().ownership().owns(s.duty()));
    assertThat(s.b().ownership().epoch(s.duty())).contains(s.epoch() + 1);
    assertThat(count(s.b(), "SELECT COUNT(*) FROM guarded WHERE epoch = ?", s.epoch()))
        .isEqualTo(1);
  }

  private static long count(Node n, String sql, Object arg) {
    return n.db().read(tx -> tx.queryLong(sql, arg));
  }

  /** Ends every session of {@code nodeId}, as the server does when that node's process dies. */
  private int endSessions(String nodeId) throws Exception {
    try (Connection c = database.database().connect()) {
      var rs =
          c.createStatement()
              .executeQuery(
                  "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity"
                      + " WHERE application_name = '"
                      + LeasedOwnership.applicationName(nodeId)
                      + "'");
      rs.next();
      return rs.getInt(1);
    }
  }

  /**
   * A process that dies takes its sessions with it; its liveness lock goes with them, and its
   * duties move at the next round, long before a 30 s lease would expire.
   */
  @Test
  void aDeadNodesDutiesMoveWhenItsSessionsEndNotWhenItsLeasesExpire() throws Exception {
    Duration longLease = Duration.ofSeconds(30);
    Node a = node("node-a", Duration.ofSeconds(2), longLease, SHORT_POLL);
    Node b = node("node-b", Duration.ofSeconds(2), longLease, SHORT_POLL);
    a.ownership().start();
    b.ownership().start();
    awaitSettled(List.of(a, b));
    Set<Duty> ofA = held(a);

    a.ownership().suspend(); // it runs no more rounds, as a killed process
    assertThat(endSessions("node-a")).isPositive();
    long killed = System.nanoTime();
    await().atMost(Duration.ofSeconds(5)).until(() -> held(b).size() == Duty.values().length);
    long tookMs = (System.nanoTime() - killed) / 1_000_000;
    LoggerFactory.getLogger(getClass()).info("sessions ended to takeover: {} ms", tookMs);
    assertThat(tookMs).isLessThan(longLease.toMillis() / 2);
    Map<Duty, ClusterView.Lease> rows = leases(b);
    for (Duty d : ofA) {
      assertThat(rows.get(d).owner()).isEqualTo("node-b");
    }
    assertThat(b.ownership().view().nodes())
        .filteredOn(n -> n.nodeId().equals("node-a"))
        .extracting(ClusterView.Node::state)
        .containsExactly(NodeState.LOST);
  }

  /**
   * A paused node sitting inside a fenced transaction does not hold a takeover until the server's
   * idle timeout (60 s here): past its lease the taker ends the paused node's sessions.
   */
  @Test
  void aPausedNodesOpenTransactionDoesNotHoldTheTakeoverPastItsLease() throws Exception {
    database
        .database()
        .connect()
        .createStatement()
        .execute("CREATE TABLE guarded (what TEXT NOT NULL, epoch BIGINT NOT NULL)");
    Duration idle = Duration.ofSeconds(60);
    Node a = node("node-a", SHORT_BEAT, SHORT_LEASE, SHORT_POLL, idle);
    Node b = node("node-b", SHORT_BEAT, SHORT_LEASE, SHORT_POLL, idle);
    a.ownership().start();
    b.ownership().start();
    awaitSettled(List.of(a, b));
    Duty duty = held(a).iterator().next();

    // What a paused process leaves: one transaction idle holding an actor's lock (ended only by
    // the 60 s idle timeout), and a fenced write still running, waiting for that lock (no idle
    // timeout applies to a statement that waits).
    java.util.concurrent.CountDownLatch wake = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch locked = new java.util.concurrent.CountDownLatch(1);
    CompletableFuture<Object> holder =
        CompletableFuture.supplyAsync(
            () ->
                a.db()
                    .inTransaction(
                        tx -> {
                          tx.queryFirst("SELECT pg_advisory_xact_lock(4712)", rs -> 1);
                          locked.countDown();
                          try {
                            wake.await();
                          } catch (InterruptedException ie) {
                            throw new IllegalStateException(ie);
                          }
                          return 1;
                        }));
    assertThat(locked.await(10, TimeUnit.SECONDS)).isTrue();
    java.util.concurrent.CountDownLatch fenced = new java.util.concurrent.CountDownLatch(1);
    CompletableFuture<Object> write =
        CompletableFuture.supplyAsync(
            () ->
                a.db()
                    .inTransaction(
                        tx -> {
                          long e = a.ownership().fence(tx, duty);
                          fenced.countDown();
                          tx.queryFirst("SELECT pg_advisory_xact_lock(4712)", rs -> 1);
                          tx.update("INSERT INTO guarded VALUES ('paused', ?)", e);
                          return e;
                        }));
    assertThat(fenced.await(10, TimeUnit.SECONDS)).isTrue();
    a.ownership().suspend();
    long paused = System.nanoTime();
    await().atMost(Duration.ofSeconds(15)).until(() -> b.ownership().owns(duty));
    long tookMs = (System.nanoTime() - paused) / 1_000_000;
    LoggerFactory.getLogger(getClass()).info("pause to takeover: {} ms", tookMs);
    assertThat(tookMs).isLessThan(SHORT_LEASE.toMillis() + 4_000);

    wake.countDown();
    // The ended sessions' work runs again on new connections at once (a terminated session is a
    // transient error), which a truly paused process would do only on waking; whether the write
    // then lands before the takeover's epoch is the fence's, tested above. What holds here: the
    // takeover did not wait for the idle timeout, and it stands.
    org.assertj.core.api.Assertions.catchThrowable(holder::join);
    org.assertj.core.api.Assertions.catchThrowable(write::join);
    assertThat(leases(b).get(duty).owner()).isEqualTo("node-b");
  }
}
