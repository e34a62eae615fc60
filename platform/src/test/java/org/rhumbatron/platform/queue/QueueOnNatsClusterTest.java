package org.rhumbatron.platform.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.api.StreamState;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsClusterExtension;
import org.rhumbatron.testkit.nats.NatsServer;

/**
 * Commands on a three-server NATS cluster with {@code streams.replicas=3}: the server the client
 * uses, which leads COMMANDS, is SIGKILLed while commands are sent and consumed, and stays down.
 * The client moves to a live server; every command is stored once (a send retried over the failover
 * is a duplicate the stream drops) and handled once, and COMMANDS drains.
 */
class QueueOnNatsClusterTest {
  @RegisterExtension final DatabaseExtension db = DatabaseExtension.sqlite();

  private static final int COMMANDS = 120;
  private static final int KILL_AFTER = 40;
  @RegisterExtension static final NatsClusterExtension nats = NatsClusterExtension.of(3);

  private static Command command(int n) {
    return QueueConsumerTest.command(CommandType.CHANGE_SETTLE, "cmd_settle_" + n);
  }

  @Test
  void aServerKilledWhileCommandsFlowLosesNoneAndRunsNoneTwice() throws Exception {
    Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();
    List<String> sendFailures = new CopyOnWriteArrayList<>();
    Settings settings = Settings.defaults().with(Settings.STREAM_REPLICAS, 3);
    EnvelopeCodec codec = new EnvelopeCodec();
    Clock clock = Clock.systemUTC();
    // The victim is the server that leads COMMANDS and serves the client: the client connects to
    // it first, so its death is both a failover of the client and of the stream's leader.
    NatsServer victim;
    try (Connection setup = nats.cluster().connect()) {
      new JetStreamTopology(setup, settings).ensure();
      victim =
          nats.cluster()
              .named(
                  setup
                      .jetStreamManagement()
                      .getStreamInfo(Queue.STREAM_NAME)
                      .getClusterInfo()
                      .getLeader());
    }
    String victimFirst = victim.url() + "," + nats.cluster().url();
    try (Connection connection =
            Nats.connect(
                JetStreamConnections.options(victimFirst, "queue-cluster-test")
                    .noRandomize()
                    .build());
        Database database = Database.open(db.database().url())) {
      assertThat(nats.cluster().serving(connection)).isSameAs(victim);
      Commands commands = new Commands(new JetStreamCommandTransport(connection), codec);
      QueueRuntime runtime =
          new QueueRuntime(
              connection,
              commands,
              codec,
              new QueueTimings(
                  Duration.ofSeconds(5), Duration.ofSeconds(1), Duration.ofSeconds(30)),
              clock,
              new DatabaseHandlerRuns(database, clock, Duration.ofDays(14)));
      QueueConsumerConfig config =
          new QueueConsumerConfig(
              Queue.INTEGRATION, 10, 2, 3, Duration.ofMillis(300), Queue.DEAD_LETTER);
      try (QueueConsumer<Command> consumer =
          runtime.runQueueConsumer(
              config,
              (c, d) -> {
                handled.computeIfAbsent(c.commandId(), id -> new AtomicInteger()).incrementAndGet();
                return Outcome.ack();
              },
              null)) {
        for (int n = 0; n < COMMANDS; n++) {
          if (n == KILL_AFTER) {
            await().atMost(Duration.ofSeconds(10)).until(() -> handled.size() >= KILL_AFTER / 2);
            victim.kill();
          }
          // As a sender does: a send without a PubAck goes again with the same message id.
          Command c = command(n);
          await()
              .atMost(Duration.ofSeconds(30))
              .until(
                  () -> {
                    try {
                      commands.send(c).get(10, TimeUnit.SECONDS);
                      return true;
                    } catch (ExecutionException | TimeoutException e) {
                      sendFailures.add(c.commandId() + ": " + e);
                      return false;
                    }
                  });
        }
        await()
            .atMost(Duration.ofSeconds(30))
            .ignoreExceptions()
            .until(() -> handled.size() == COMMANDS && stream(connection).getMsgCount() == 0);
      }
      assertThat(victim.isRunning()).isFalse();
      assertThat(nats.cluster().serving(connection))
          .as("the server the client moved to")
          .isNotSameAs(victim)
          .matches(NatsServer::isRunning);
      assertThat(stream(connection).getLastSequence())
          .as("messages COMMANDS stored; sends retried over the failover: %s", sendFailures)
          .isEqualTo(COMMANDS);
      // Delivery is at least once: an ack the killed server took with it brings its message back
      // after the ack wait (handlers are idempotent). Only messages in flight at the kill, at most
      // batch x concurrency, may come twice; nothing may come a third time.
      assertThat(handled.values())
          .as("commands handled more than twice")
          .noneMatch(n -> n.get() > 2);
      assertThat(handled.values())
          .as("commands handled twice: at most the batch x concurrency in flight at the kill")
          .filteredOn(n -> n.get() == 2)
          .hasSizeLessThanOrEqualTo(config.batchSize() * config.concurrency());
    }
  }

  private static StreamState stream(Connection connection) throws Exception {
    return connection.jetStreamManagement().getStreamInfo(Queue.STREAM_NAME).getStreamState();
  }
}
