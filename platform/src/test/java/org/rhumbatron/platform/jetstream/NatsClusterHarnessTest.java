package org.rhumbatron.platform.jetstream;

import static org.assertj.core.api.Assertions.assertThat;

import io.nats.client.Connection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rhumbatron.testkit.nats.NatsCluster;
import org.rhumbatron.testkit.nats.NatsServer;

/** The cluster harness itself: three routed servers, one killed and restarted, nothing left. */
class NatsClusterHarnessTest {
  @Test
  void threeRoutedServersOneKilledAndRestartedAndCloseLeavesNothing() throws Exception {
    List<Path> stores = new ArrayList<>();
    List<ProcessHandle> processes = new ArrayList<>();
    try (NatsCluster cluster = NatsCluster.start(3)) {
      assertThat(cluster.servers().stream().map(NatsServer::name).distinct()).hasSize(3);
      assertThat(cluster.servers().stream().map(NatsServer::port).distinct()).hasSize(3);
      assertThat(cluster.servers()).noneMatch(s -> s.port() == NatsServer.SHARED_PORT);
      try (Connection c = cluster.connect()) {
        assertThat(c.getServerInfo().getCluster()).isEqualTo(cluster.name());
        // Every server's client URL, learned through the routes.
        assertThat(c.getServerInfo().getConnectURLs()).hasSize(3);
      }

      NatsServer one = cluster.server(1);
      long before = one.pid();
      one.kill();
      assertThat(one.isRunning()).isFalse();
      assertThat(ProcessHandle.of(before)).isEmpty();
      cluster.restart(one);
      assertThat(one.isRunning()).isTrue();
      assertThat(one.pid()).isNotEqualTo(before);
      try (Connection c = cluster.connect()) {
        assertThat(c.getServerInfo().getConnectURLs()).hasSize(3);
      }

      for (NatsServer s : cluster.servers()) {
        stores.add(s.storeDir());
        processes.add(ProcessHandle.of(s.pid()).orElseThrow());
      }
    }
    assertThat(stores).noneMatch(Files::exists);
    assertThat(processes).noneMatch(ProcessHandle::isAlive);
  }
}
