package org.rhumbatron.checker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/** The proxy between a jnats client and a real nats-server: forward, cut, stall, slow, heal. */
class TcpProxyTest {
  @RegisterExtension static final NatsServerExtension nats = new NatsServerExtension();

  private static Connection through(TcpProxy proxy) throws Exception {
    return Nats.connect(
        new Options.Builder()
            .server(proxy.natsUrl())
            .maxReconnects(-1)
            .reconnectWait(Duration.ofMillis(100))
            .connectionTimeout(Duration.ofSeconds(2))
            .pingInterval(Duration.ofMillis(500))
            .maxPingsOut(2)
            .build());
  }

  /** An echo service on the server itself, not through the proxy. */
  private static Connection echo() throws Exception {
    Connection direct = Nats.connect(nats.url());
    Dispatcher d = direct.createDispatcher(m -> direct.publish(m.getReplyTo(), m.getData()));
    d.subscribe("echo");
    direct.flush(Duration.ofSeconds(5));
    return direct;
  }

  private static boolean answers(Connection c, Duration within) {
    try {
      Message m =
          c.request("echo", "hi".getBytes(StandardCharsets.UTF_8))
              .get(within.toMillis(), TimeUnit.MILLISECONDS);
      return "hi".equals(new String(m.getData(), StandardCharsets.UTF_8));
    } catch (Exception e) {
      return false;
    }
  }

  private static TcpProxy proxy() throws Exception {
    URI u = URI.create(nats.url());
    return TcpProxy.start(u.getHost(), u.getPort());
  }

  @Test
  void aCutLinkDisconnectsTheClientAndAHealedOneReconnectsIt() throws Exception {
    try (Connection direct = echo();
        TcpProxy proxy = proxy();
        Connection client = through(proxy)) {
      assertThat(answers(client, Duration.ofSeconds(5))).isTrue();
      assertThat(proxy.connectionsAccepted()).isEqualTo(1);

      proxy.cut();
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> client.getStatus() != Connection.Status.CONNECTED);
      assertThat(answers(client, Duration.ofMillis(500))).isFalse();

      proxy.heal();
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> client.getStatus() == Connection.Status.CONNECTED);
      assertThat(answers(client, Duration.ofSeconds(5))).isTrue();
      assertThat(proxy.connectionsAccepted()).isGreaterThanOrEqualTo(2);
    }
  }

  @Test
  void aStalledLinkForwardsNothingUntilHealed() throws Exception {
    try (Connection direct = echo();
        TcpProxy proxy = proxy();
        Connection client = Nats.connect(new Options.Builder().server(proxy.natsUrl()).build())) {
      assertThat(answers(client, Duration.ofSeconds(5))).isTrue();
      proxy.stall();
      assertThat(answers(client, Duration.ofSeconds(1))).isFalse();
      proxy.heal();
      await().atMost(Duration.ofSeconds(10)).until(() -> answers(client, Duration.ofSeconds(2)));
    }
  }

  @Test
  void aSlowLinkTakesAtLeastItsRate() throws Exception {
    try (Connection direct = echo();
        TcpProxy proxy = proxy();
        Connection client = Nats.connect(new Options.Builder().server(proxy.natsUrl()).build())) {
      proxy.slow(20_000);
      long before = proxy.bytesForwarded();
      long start = System.nanoTime();
      byte[] payload = new byte[100_000];
      client.publish("sink", payload);
      client.flush(Duration.ofSeconds(30));
      long millis = (System.nanoTime() - start) / 1_000_000;
      assertThat(proxy.bytesForwarded() - before).isGreaterThanOrEqualTo(payload.length);
      assertThat(millis).as("100 kB at 20 kB/s").isGreaterThanOrEqualTo(3_000);
    }
  }
}
