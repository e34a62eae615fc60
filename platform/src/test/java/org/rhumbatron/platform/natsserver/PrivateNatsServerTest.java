package org.rhumbatron.platform.natsserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nats.client.Connection;
import io.nats.client.Nats;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PrivateNatsServerTest {
  @TempDir Path data;

  @Test
  void aMissingBinaryIsOneLineNamingTheDebianPackage() {
    assertThatThrownBy(() -> PrivateNatsServer.findBinary("/nonexistent", List.of()))
        .isInstanceOf(PrivateNatsServer.NatsServerException.class)
        .hasMessageContaining("apt-get install -y nats-server")
        .hasMessageNotContaining("\n");
  }

  @Test
  void startsWithJetStreamAndItsStoreUnderTheDataDirectory() throws Exception {
    try (PrivateNatsServer server = PrivateNatsServer.start(data, 0);
        Connection c = Nats.connect(server.url())) {
      assertThat(server.url()).doesNotEndWith(":4222");
      assertThat(server.storeDir()).isEqualTo(data.resolve("nats"));
      assertThat(c.jetStreamManagement().getAccountStatistics()).isNotNull();
    }
  }
}
