package org.rhumbatron.platform.jetstream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.PublishAck;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.api.StreamInfo;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.testkit.nats.NatsServer;
import org.rhumbatron.testkit.nats.NatsServerExtension;
import org.rhumbatron.testkit.nats.UniqueNames;

/** The test harness itself: a private server that can be killed, restarted and thrown away. */
class NatsServerHarnessTest {
  @RegisterExtension static NatsServerExtension nats = new NatsServerExtension();

  private static final int MESSAGES = 2_000;

  /**
   * Every publish acknowledged before SIGKILL is found after the restart. nats-server 2.9 writes
   * the message to its block file (a pwrite, no fsync) before it sends the PubAck, and SIGKILL does
   * not lose the OS page cache, so this holds deterministically; only a crash of the machine can
   * lose an acknowledged tail.
   *
   * <p>The check after the restart uses a new connection on purpose: with jnats 2.25.1 a connection
   * that reconnected to the restarted server sometimes sends nothing until pings time out (see
   * {@link JetStreamConnections#DEFAULT_PING_INTERVAL}); that client bug is not what this tests.
   */
  @Test
  void killedServerRestartsWithItsStreamAndMessages(NatsServer server, UniqueNames names)
      throws Exception {
    String stream = names.stream();
    String subject = names.subject();
    String urlBefore = server.url();
    long lastAcked;
    try (Connection connection = server.connect()) {
      connection
          .jetStreamManagement()
          .addStream(
              StreamConfiguration.builder()
                  .name(stream)
                  .subjects(subject)
                  .storageType(StorageType.File)
                  .build());
      JetStream js = connection.jetStream();
      // Async publishes, so the kill lands right after the last ack, with no idle time for flushes.
      List<CompletableFuture<PublishAck>> acks = new ArrayList<>();
      for (int i = 1; i <= MESSAGES; i++) {
        acks.add(js.publishAsync(subject, payload(i)));
      }
      CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).join();
      lastAcked = acks.get(MESSAGES - 1).join().getSeqno();
      assertThat(lastAcked).isEqualTo(MESSAGES);

      long pid = server.pid();
      server.kill();
      assertThat(server.isRunning()).isFalse();
      assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).isNotEqualTo(Optional.of(true));
    }

    server.restart();

    assertThat(server.url()).isEqualTo(urlBefore);
    try (Connection connection = server.connect()) {
      JetStreamManagement jsm = connection.jetStreamManagement();
      StreamInfo info = jsm.getStreamInfo(stream);
      assertThat(info.getStreamState().getMsgCount()).isEqualTo(MESSAGES);
      assertThat(info.getStreamState().getLastSequence()).isEqualTo(lastAcked);
      for (long seq = 1; seq <= MESSAGES; seq++) {
        assertThat(jsm.getMessage(stream, seq).getData()).isEqualTo(payload((int) seq));
      }
    }
  }

  @Test
  void stopIsGracefulAndRestartKeepsPortAndStore(NatsServer server, UniqueNames names)
      throws Exception {
    String stream = names.stream();
    String subject = names.subject();
    try (Connection connection = server.connect()) {
      connection
          .jetStreamManagement()
          .addStream(StreamConfiguration.builder().name(stream).subjects(subject).build());
      connection.jetStream().publish(subject, payload(1));
    }
    int port = server.port();

    server.stop();
    assertThat(server.isRunning()).isFalse();
    assertThat(Files.readString(server.logFile())).contains("Server Exiting");
    server.restart();

    assertThat(server.port()).isEqualTo(port);
    try (Connection connection = server.connect()) {
      assertThat(
              connection.jetStreamManagement().getStreamInfo(stream).getStreamState().getMsgCount())
          .isEqualTo(1);
    }
  }

  @Test
  void neverUsesTheSharedPort() {
    assertThat(nats.server().port()).isNotEqualTo(4222);
    assertThat(nats.url()).startsWith("nats://127.0.0.1:").doesNotEndWith(":4222");
    for (int i = 0; i < 500; i++) {
      assertThat(NatsServer.freePort()).isNotEqualTo(NatsServer.SHARED_PORT);
    }
  }

  @Test
  void closeKillsTheServerAndDeletesItsStore() throws Exception {
    NatsServer own = NatsServer.start();
    Path storeDir = own.storeDir();
    Path workDir = storeDir.getParent();
    try (Connection connection = own.connect()) {
      connection
          .jetStreamManagement()
          .addStream(
              StreamConfiguration.builder().name("CLOSE_PROBE").subjects("close.probe").build());
      connection.jetStream().publish("close.probe", payload(1));
    }
    assertThat(own.streamDir("CLOSE_PROBE")).isDirectory();
    long pid = own.pid();

    own.close();
    own.close(); // idempotent

    assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).isNotEqualTo(Optional.of(true));
    assertThat(workDir).doesNotExist();
    assertThat(own.isRunning()).isFalse();
    assertThatThrownBy(own::restart).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void uniqueNamesAreUniqueAndValidForStreamsAndBuckets(UniqueNames names) {
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < 100; i++) {
      assertThat(seen.add(names.stream())).isTrue();
      assertThat(seen.add(names.consumer())).isTrue();
      assertThat(seen.add(names.bucket())).isTrue();
    }
    assertThat(seen).allMatch(n -> n.matches("[A-Za-z0-9_-]+"));
    // The test's name, cut to 32 characters so names stay short.
    assertThat(names.prefix()).isEqualTo("uniqueNamesAreUniqueAndValidForS");
    assertThat(UniqueNames.forPrefix("a b.c*>").stream()).startsWith("a_b_c__");
  }

  @Test
  void missingBinaryNamesTheDebianPackage() {
    assertThatThrownBy(
            () -> NatsServer.findBinary("/nonexistent-dir", Path.of("/nonexistent-sbin")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("Debian package 'nats-server'");
  }

  private static byte[] payload(int i) {
    return ("message-" + i).getBytes(StandardCharsets.UTF_8);
  }
}
