package org.rhumbatron.coordinator.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.rhumbatron.coordinator.outbox.OutboxLoad.assertEveryEventOnceInCommitOrder;
import static org.rhumbatron.coordinator.outbox.OutboxLoad.awaitAllPublished;
import static org.rhumbatron.coordinator.outbox.OutboxLoad.countPublished;

import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.coordinator.NumberedEvents;
import org.rhumbatron.coordinator.outbox.OutboxLoad.Core;
import org.rhumbatron.coordinator.outbox.OutboxLoad.Writer;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.db.TestDatabases;
import org.rhumbatron.testkit.nats.NatsClusterExtension;
import org.rhumbatron.testkit.nats.NatsServer;

/**
 * The outbox on a three-server NATS cluster with {@code streams.replicas=3}: the server core's
 * connection uses, which leads an event stream, is SIGKILLed under a steady load of state changes
 * and stays down. The client moves to a live server, publishing goes on, and every Event is on its
 * stream once, in commit order, read back from the two servers left.
 */
class OutboxOnNatsClusterTest {
  @RegisterExtension static final NatsClusterExtension nats = NatsClusterExtension.of(3);

  @Test
  void aServerKilledUnderLoadLosesNoEvent() throws Exception {
    // A project on each event stream, so every stream's leader and copies are put to the test.
    List<String> projects =
        IntStream.range(0, EventStreams.STREAM_COUNT)
            .mapToObj(i -> NumberedEvents.projectOnStream("cluster", i))
            .toList();
    Settings settings = Settings.defaults().with(Settings.STREAM_REPLICAS, 3);
    try (TestDatabase database = TestDatabases.create(TestDatabase.Kind.SQLITE);
        Core core = new Core(database.url(), nats.cluster().url(), settings)) {
      for (String p : projects) {
        assertThat(core.coordinator.root(p).createProject("tenant-1", p).join()).isTrue();
      }
      // The victim serves core's connection and leads EVENTS_00: its death moves the client
      // and makes that stream elect a leader among its other copies.
      NatsServer victim = nats.cluster().serving(core.connection);
      nats.cluster().makeLeader(core.connection, EventStreams.streamName(0), victim);
      Writer writer = new Writer(core.coordinator, projects);
      try (writer) {
        writer.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> countPublished(core.db) >= 200);

        victim.kill();
        int atKill = writer.committed.get();
        await().atMost(Duration.ofSeconds(20)).until(() -> writer.committed.get() >= atKill + 400);
      }
      assertThat(writer.errors).as("every state change committed").isEmpty();

      awaitAllPublished(core.db, Duration.ofSeconds(30));
      assertThat(victim.isRunning()).isFalse();
      assertThat(core.transport.isConnected()).isTrue();
      assertThat(nats.cluster().serving(core.connection))
          .as("the server the client moved to")
          .isNotSameAs(victim)
          .matches(NatsServer::isRunning);
      assertEveryEventOnceInCommitOrder(core, projects, writer);
    }
  }
}
