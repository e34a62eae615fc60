package org.rhumbatron.platform.eventlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.testkit.nats.NatsServer;
import org.rhumbatron.testkit.nats.NatsServerExtension;

class JetStreamEventLogTest {
  @RegisterExtension static NatsServerExtension nats = new NatsServerExtension();

  @Test
  void aSendWhosePredecessorIsNotTheStreamsLastMessageIsRefusedAsSuch() throws Exception {
    try (Connection c = JetStreamConnections.connect(nats.url(), "test")) {
      new JetStreamTopology(c.jetStreamManagement(), Settings.defaults()).ensure();
      JetStreamEventLog log = JetStreamEventLog.bind(c);
      String first = "evt_00000000000000000000000000000001";
      String second = "evt_00000000000000000000000000000002";
      long seq = log.publish(3, first, "{}".getBytes(), null).get();
      assertThat(log.messageIdAt(3, seq)).contains(first);

      // Expecting a message that is not the stream's last: the server refuses, and the error
      // is recognisable whatever jnats wraps it in.
      ExecutionException refused =
          org.junit.jupiter.api.Assertions.assertThrows(
              ExecutionException.class,
              () ->
                  log.publish(3, second, "{}".getBytes(), "evt_ffffffffffffffffffffffffffffffff")
                      .get());
      assertThat(refused.getCause()).isInstanceOf(PredecessorMissingException.class);

      assertThat(log.publish(3, second, "{}".getBytes(), first).get()).isEqualTo(seq + 1);
      assertThat(log.lastSequence(3)).isEqualTo(seq + 1);
    }
  }

  @Test
  void theConnectionEpochMovesWhenTheConnectionDropsBeforeTheReconnectIsAnnounced()
      throws Exception {
    NatsServer server = NatsServer.start();
    try (server;
        Connection c = JetStreamConnections.connect(server.url(), "test")) {
      JetStreamEventLog log = JetStreamEventLog.bind(c);
      long before = log.connectionEpoch();
      List<Long> atReconnect = new CopyOnWriteArrayList<>();
      c.addConnectionListener(
          (conn, event) -> {
            if (event == ConnectionListener.Events.RECONNECTED) {
              atReconnect.add(log.connectionEpoch());
            }
          });

      server.stop();
      await().atMost(Duration.ofSeconds(20)).until(() -> !log.isConnected());
      // A check that reads the epoch now and resumes under it is held by the drop.
      long whileDown = log.connectionEpoch();
      assertThat(whileDown).isGreaterThan(before);

      server.restart();
      await().atMost(Duration.ofSeconds(30)).until(() -> !atReconnect.isEmpty());
      // What a RECONNECTED listener reads is what sends will be compared with from then on.
      await()
          .during(Duration.ofMillis(500))
          .atMost(Duration.ofSeconds(5))
          .until(() -> log.connectionEpoch() == atReconnect.get(0));
      assertThat(atReconnect.get(0)).isGreaterThanOrEqualTo(whileDown);
    }
  }
}
