package org.rhumbatron.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.cluster.Duty;
import org.rhumbatron.platform.cluster.FreezableClock;
import org.rhumbatron.platform.cluster.LeasedOwnership;
import org.rhumbatron.platform.cluster.TestNodes;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.testkit.Fixtures;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * Two routers on one PostgreSQL database and one nats-server: a node that lost a stream's duty
 * while paused (a zombie) commits nothing of the batch it fetched; it hands the records back, and
 * the new holder applies each Event once.
 */
class TwoNodeRouterTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.postgres();
  @TempDir Path dataDir;

  private static final Duration LEASE = TestNodes.LEASE;

  @RegisterExtension
  @Order(Fixtures.LAST)
  final Fixtures<RouterFixture> nodes = new Fixtures<>();

  private RouterFixture node(String id) throws Exception {
    return node(id, Clock.systemUTC());
  }

  /** A node whose leases run on {@code leaseClock}: a {@link FreezableClock} makes a zombie. */
  private RouterFixture node(String id, Clock leaseClock) throws Exception {
    RouterFixture f =
        new RouterFixture(
            nats.url(),
            database.database().url(),
            dataDir.resolve(id),
            Map.of(),
            archiver -> archiver,
            db -> TestNodes.ownership(db, id, leaseClock));
    return nodes.add(f);
  }

  @Test
  void onlyTheHolderOfTheSweepDutyRunsMaintenanceAndAZombiesPurgeIsFenced() throws Exception {
    FreezableClock aTime = new FreezableClock();
    FreezableClock bTime = new FreezableClock();
    RouterFixture a = node("node-a", aTime);
    RouterFixture b = node("node-b", bTime);
    TestNodes.startSharing(a.ownership, b.ownership);
    RouterFixture holder = a.ownership.owns(Duty.SWEEP) ? a : b;
    RouterFixture other = holder == a ? b : a;
    FreezableClock holderTime = holder == a ? aTime : bTime;
    Instant daily = Instant.parse("2026-12-03T04:17:10Z");

    assertThat(other.router.sweepTick(daily).maintenance()).isEmpty();
    assertThat(other.sentCommands).isEmpty();
    assertThat(holder.router.sweepTick(daily).maintenance()).hasSize(1);
    assertThat(holder.sentCommands)
        .extracting(c -> c.commandType().wireName())
        .contains("forks.sweep");
    assertThat(holder.ownership.fencedWrites()).isZero();

    ((LeasedOwnership) holder.ownership).suspend(); // paused past its lease
    holderTime.freeze(); // its work went on past its last look at the lease
    await().atMost(LEASE.plusSeconds(5)).until(() -> other.ownership.owns(Duty.SWEEP));
    assertThat(holder.ownership.owns(Duty.SWEEP)).isTrue();
    holder.router.sweepTick(daily.plus(Duration.ofDays(1)));
    assertThat(holder.ownership.fencedWrites()).as("its purge batches were refused").isPositive();
    assertThat(holder.ownership.owns(Duty.SWEEP)).isFalse();
    assertThat(other.router.sweepTick(daily.plus(Duration.ofDays(1))).maintenance()).hasSize(1);
  }

  /**
   * An event on a stream that is not its project's (as a hostile publisher can put one) is fenced
   * by the stream it was read from: the node that runs that stream claims it, although another node
   * holds its project's stream.
   */
  @Test
  void anEventOnAnotherProjectsStreamIsClaimedUnderTheStreamItWasReadFrom() throws Exception {
    RouterFixture a = node("node-a");
    RouterFixture b = node("node-b");
    TestNodes.startSharing(a.ownership, b.ownership);
    String mine = TestNodes.projectHeldBy(a.ownership, "p-read");
    String theirs = TestNodes.projectHeldBy(b.ownership, "p-forged");
    int stream = EventStreams.streamIndex(mine);
    Event forged = RouterEvents.event(theirs, "c-forged", null, EventType.CHANGE_CREATED, null);
    a.publishRaw(stream, forged.eventId(), a.codec.encodeEvent(forged));

    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              runOnce(a, stream);
              return a.count(
                      "SELECT COUNT(*) FROM processed_events WHERE event_id = ?"
                          + " AND consumer = 'causal-router'",
                      forged.eventId())
                  == 1;
            });
    assertThat(a.count("SELECT COUNT(*) FROM k2_batch_failures WHERE consumer = 'causal-router'"))
        .as("no failure counted for the stream's own claims")
        .isZero();
  }

  private static void runOnce(RouterFixture f, int stream) {
    f.router.nudge(stream);
    f.router.drained(stream).join();
  }

  @Test
  void aZombieRouterCommitsNothingAndTheNewHolderAppliesEachEventOnce() throws Exception {
    FreezableClock aTime = new FreezableClock();
    RouterFixture a = node("node-a", aTime);
    RouterFixture b = node("node-b");
    // The claims' times tell which node wrote them.
    b.clock.advance(Duration.ofHours(1));
    TestNodes.startSharing(a.ownership, b.ownership);
    String p = TestNodes.projectHeldBy(a.ownership, "p-route");
    int stream = EventStreams.streamIndex(p);
    Duty duty = Duty.stream(stream);
    ((LeasedOwnership) a.ownership).suspend(); // paused past its lease
    aTime.freeze(); // its work went on past its last look at the lease
    await().atMost(LEASE.plusSeconds(5)).until(() -> b.ownership.owns(duty));
    b.router.drained(stream).join(); // the run its takeover queued found nothing yet

    List<Event> events = RouterEvents.changeWithTasks(p, "c-zombie", 3);
    a.publish(events);

    assertThat(a.ownership.owns(duty)).as("the zombie still believes it holds it").isTrue();
    runOnce(a, stream);
    assertThat(a.count("SELECT COUNT(*) FROM project_events WHERE project_id = ?", p))
        .as("nothing of the zombie's batch lands")
        .isZero();
    assertThat(a.count("SELECT COUNT(*) FROM processed_events")).isZero();
    assertThat(a.count("SELECT COUNT(*) FROM k2_batch_failures")).isZero();
    assertThat(a.ownership.fencedWrites()).isPositive();
    assertThat(a.ownership.owns(duty)).isFalse();

    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              runOnce(b, stream);
              return b.count("SELECT COUNT(*) FROM project_events WHERE project_id = ?", p)
                  == events.size();
            });
    assertThat(
            b.count(
                "SELECT COUNT(*) FROM processed_events WHERE consumer = 'project-view-projector'"
                    + " AND processed_at_ms = ?",
                b.clock.millis()))
        .as("every claim is the new holder's")
        .isEqualTo(events.size());
    assertThat(
            b.count(
                "SELECT COUNT(*) FROM processed_events WHERE processed_at_ms <> ?",
                b.clock.millis()))
        .isZero();
  }

  /**
   * A node that dies with a fetched batch in hand: its successor applies that batch at once, read
   * from the stream, instead of waiting out the seed's 5-minute ack wait; the redelivery that
   * follows is a repeat.
   */
  @Test
  void aTakeoverAppliesWhatTheDeadHolderHadInHandWithoutItsRedelivery() throws Exception {
    RouterFixture a = node("node-a");
    RouterFixture b = node("node-b");
    TestNodes.startSharing(a.ownership, b.ownership);
    String p = TestNodes.projectHeldBy(a.ownership, "p-inhand");
    int stream = EventStreams.streamIndex(p);
    List<Event> events = RouterEvents.changeWithTasks(p, "c-inhand", 3);
    a.publish(events);
    // a takes the projector's batch and dies before it applies or acks any of it.
    assertThat(a.eventLog.fetch(stream, Subscription.PROJECT_VIEW_PROJECTOR, 100))
        .hasSize(events.size());
    ((LeasedOwnership) a.ownership).suspend();
    try (java.sql.Connection c = database.database().connect()) {
      c.createStatement()
          .execute(
              "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '"
                  + LeasedOwnership.applicationName("node-a")
                  + "'");
    }
    assertThat(b.settings.get(Settings.ROUTER_ACK_WAIT)).isEqualTo(Duration.ofMinutes(5));

    await().atMost(Duration.ofSeconds(15)).until(() -> b.ownership.owns(Duty.stream(stream)));
    await()
        .atMost(Duration.ofSeconds(15))
        .until(
            () ->
                b.count("SELECT COUNT(*) FROM project_events WHERE project_id = ?", p)
                    == events.size());
    assertThat(b.router.takenOverApplied()).isGreaterThanOrEqualTo(events.size());
  }
}
