package org.rhumbatron.coordinator.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.coordinator.CoordinatorFixture;
import org.rhumbatron.coordinator.OutboxRows;
import org.rhumbatron.coordinator.actor.ActorAddress;
import org.rhumbatron.platform.cluster.KickRelay;
import org.rhumbatron.platform.cluster.TestNodes;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * Two coordinators on one PostgreSQL database: an outbox actor's backstop alarm, which the node
 * holding the actor's stream may fire and clear, is set again by the next transaction that writes
 * Events on a node that does not hold it.
 */
class PostgresTwoNodeAlarmTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.postgres();

  private final SettableClock clock = CoordinatorFixture.clockAt("2026-12-06T10:00:00Z");
  private CoordinatorFixture one;
  private CoordinatorFixture two;

  @BeforeEach
  void start() throws Exception {
    String url = database.database().url();
    one =
        CoordinatorFixture.startNode(
            url, nats.url(), clock, Settings.defaults(), db -> TestNodes.ownership(db, "node-1"));
    two =
        CoordinatorFixture.startNode(
            url, nats.url(), clock, Settings.defaults(), db -> TestNodes.ownership(db, "node-2"));
    TestNodes.startSharing(one.ownership, two.ownership);
    // Rows node one commits on a stream node two holds reach two's publisher as relayed kicks.
    for (CoordinatorFixture f : List.of(one, two)) {
      KickRelay relay = KickRelay.start(f.nats, f.coordinator.publisher()::kickHeld);
      f.coordinator.publisher().forwardKicks(relay::send);
    }
  }

  @AfterEach
  void stop() throws Exception {
    two.close();
    one.close();
  }

  @Test
  void anAlarmAnotherNodeFiredAndClearedIsSetAgainByTheNextTransactionWithEvents()
      throws Exception {
    String p = TestNodes.projectHeldBy(two.ownership, "p-alarm");
    ActorAddress root = one.coordinator.root(p).address();
    one.coordinator.root(p).createProject("tenant-1", "Demo").join();
    Instant backstop =
        clock.instant().plus(Settings.defaults().get(Settings.OUTBOX_ALARM_BACKSTOP));
    assertThat(alarmOf(one, root)).contains(backstop);
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> OutboxRows.all(one.db).stream().allMatch(r -> r.state().equals("published")));

    // Due work earlier than the backstop (a retry, say) brings the alarm forward; node two, which
    // holds the stream, fires it and, finding nothing due, clears it, before node one's backstop.
    two.db.inTransaction(
        tx -> {
          two.coordinator.runtime().alarms().set(tx, root, clock.instant());
          return null;
        });
    assertThat(two.coordinator.runtime().fireDueAlarms()).isEqualTo(1);
    assertThat(alarmOf(one, root)).isEmpty();

    clock.advance(Duration.ofSeconds(1));
    assertThat(
            one.coordinator
                .root(p)
                .advanceCanonical(0, "cand_1", "chg_0123456789abcdef0123456789abcdef")
                .join())
        .isEqualTo(1);
    assertThat(alarmOf(one, root))
        .as("node one's second write is backed by an alarm again")
        .contains(clock.instant().plus(Settings.defaults().get(Settings.OUTBOX_ALARM_BACKSTOP)));
  }

  private static Optional<Instant> alarmOf(CoordinatorFixture f, ActorAddress a) {
    return f.db.read(tx -> f.coordinator.runtime().alarms().dueAt(tx, a));
  }
}
