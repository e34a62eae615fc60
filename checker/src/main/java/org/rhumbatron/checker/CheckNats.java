package org.rhumbatron.checker;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.rhumbatron.faults.NatsStoreDamage;
import org.rhumbatron.platform.natsserver.PrivateNatsServer;
import org.rhumbatron.protocol.EventStreams;

/**
 * The check's NATS: one private {@code nats-server}, or a cluster of them routed to each other on
 * loopback, each on a fixed port (so a restart keeps its address) behind a {@link TcpProxy} of its
 * own. Core connects through the proxies; cluster members do not advertise their own addresses to
 * clients, so core's connection cannot leave the proxies behind. The checker reads directly.
 */
final class CheckNats implements AutoCloseable {
  static final String CLUSTER_NAME = "rhumbatron-check";

  private final Path dir;
  private final int[] ports;
  private final int[] routePorts;
  private final List<TcpProxy> proxies = new ArrayList<>();
  private final PrivateNatsServer[] servers;

  CheckNats(Path dir, int size) throws IOException {
    if (size < 1) {
      throw new IllegalArgumentException("a check needs at least one nats-server, got " + size);
    }
    this.dir = dir;
    this.ports = new int[size];
    this.routePorts = new int[size];
    this.servers = new PrivateNatsServer[size];
    for (int i = 0; i < size; i++) {
      ports[i] = CheckCores.freePort();
      routePorts[i] = CheckCores.freePort();
      proxies.add(TcpProxy.start("127.0.0.1", ports[i]));
    }
  }

  int size() {
    return servers.length;
  }

  /** The servers' own addresses, comma separated: the checker reads the streams here. */
  String url() {
    List<String> urls = new ArrayList<>();
    for (int port : ports) {
      urls.add("nats://127.0.0.1:" + port);
    }
    return String.join(",", urls);
  }

  /** What core's {@code --nats} gets: every server through its proxy. */
  String proxiedUrl() {
    return String.join(",", proxies.stream().map(TcpProxy::natsUrl).toList());
  }

  /** Each proxy in turn: a link fault is between core and every server. */
  void proxies(Consumer<TcpProxy> fault) {
    proxies.forEach(fault);
  }

  synchronized void startAll() {
    for (int i = 0; i < servers.length; i++) {
      start(i);
    }
  }

  synchronized void start(int i) {
    if (servers[i] == null) {
      servers[i] = PrivateNatsServer.start(serverDir(i), ports[i], clusterArgs(i));
    }
  }

  /** SIGKILL of server {@code i}: nothing flushed, nothing said to the clients. */
  synchronized void kill(int i) throws Exception {
    if (servers[i] == null) {
      return;
    }
    Signals.send(servers[i].serverPid(), "KILL", "nats-server");
    servers[i].close();
    servers[i] = null;
  }

  synchronized void killAll() throws Exception {
    for (int i = 0; i < servers.length; i++) {
      kill(i);
    }
  }

  synchronized void signalAll(String signal) throws Exception {
    for (PrivateNatsServer s : servers) {
      if (s != null) {
        Signals.send(s.serverPid(), signal, "nats-server");
      }
    }
  }

  /**
   * SIGKILL, the last block file of one event stream cut by {@code messages}, start again: events
   * the server had acknowledged are gone, and only the outbox can send them again. One server only:
   * in a cluster the other replicas still hold the tail.
   */
  synchronized List<Long> loseTail(int stream, int messages) throws Exception {
    if (servers.length != 1) {
      throw new IllegalStateException("lost-tail needs a single nats-server");
    }
    kill(0);
    Path streamDir =
        serverDir(0)
            .resolve("nats")
            .resolve("jetstream")
            .resolve("$G")
            .resolve("streams")
            .resolve(EventStreams.streamName(stream));
    try {
      return Files.isDirectory(streamDir)
          ? NatsStoreDamage.cutLastMessages(streamDir, messages)
          : List.of();
    } finally {
      start(0); // also when the cut failed: the run goes on or closes a server that runs
    }
  }

  /** A single server keeps the layout of earlier checks: its store in {@code dir/nats}. */
  private Path serverDir(int i) {
    return servers.length == 1 ? dir : dir.resolve("nats-" + (i + 1));
  }

  private List<String> clusterArgs(int i) {
    if (servers.length == 1) {
      return List.of();
    }
    List<String> routes = new ArrayList<>();
    for (int j = 0; j < servers.length; j++) {
      if (j != i) {
        routes.add("nats://127.0.0.1:" + routePorts[j]);
      }
    }
    return List.of(
        "--server_name",
        CLUSTER_NAME + "-" + (i + 1),
        "--cluster_name",
        CLUSTER_NAME,
        "--cluster",
        "nats://127.0.0.1:" + routePorts[i],
        "--routes",
        String.join(",", routes),
        "--no_advertise");
  }

  @Override
  public synchronized void close() {
    for (TcpProxy p : proxies) {
      p.close();
    }
    for (int i = 0; i < servers.length; i++) {
      if (servers[i] != null) {
        servers[i].close();
        servers[i] = null;
      }
    }
  }
}
