package org.rhumbatron.coordinator.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.rhumbatron.coordinator.outbox.OutboxLoad.assertEveryEventOnceInCommitOrder;
import static org.rhumbatron.coordinator.outbox.OutboxLoad.awaitAllPublished;
import static org.rhumbatron.coordinator.outbox.OutboxLoad.countPublished;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rhumbatron.coordinator.NumberedEvents;
import org.rhumbatron.coordinator.OutboxRows;
import org.rhumbatron.coordinator.outbox.OutboxLoad.Core;
import org.rhumbatron.coordinator.outbox.OutboxLoad.Writer;
import org.rhumbatron.platform.config.Settings;
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

  /** Far beyond the test's waits, so only the reconnect hook can resume publishing in time. */
  private static final Duration ALARM_BACKSTOP = Duration.ofMinutes(5);

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  @ParameterizedTest
  @EnumSource(TestDatabase.Kind.class)
  void natsDownUnderSteadyLoadThenBack(TestDatabase.Kind kind) throws Exception {
    NatsServer server = nats.server();
    List<String> projects =
        NumberedEvents.projects("outage-" + kind.name().toLowerCase(), PROJECTS);
    Settings settings = Settings.defaults().with(Settings.OUTBOX_ALARM_BACKSTOP, ALARM_BACKSTOP);
    try (TestDatabase database = TestDatabases.create(kind);
        Core core = new Core(database.url(), server.url(), settings)) {
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
}
