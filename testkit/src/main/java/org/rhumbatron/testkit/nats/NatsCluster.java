package org.rhumbatron.testkit.nats;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A cluster of private {@code nats-server}s with JetStream for one test class: each on 127.0.0.1
 * with free client, monitoring and route ports, its own store and log in a temporary directory
 * ({@link NatsServer} handles each process), a route to every other server, one cluster name and a
 * server name each. A test can SIGKILL one server ({@link NatsServer#kill()}) and bring it back
 * ({@link #restart(NatsServer)}). {@link #close()} kills them all and deletes their directories.
 */
public final class NatsCluster implements AutoCloseable {
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);
  private static final int START_ATTEMPTS = 5;
  private static final Pattern META_LEADER = Pattern.compile("\"leader\":\\s*\"([^\"]+)\"");
  private static final Pattern NUM_ROUTES = Pattern.compile("\"num_routes\":\\s*(\\d+)");

  private final String name;
  private final List<NatsServer> servers;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private boolean closed;

  private NatsCluster(String name, List<NatsServer> servers) {
    this.name = name;
    this.servers = List.copyOf(servers);
  }

  /**
   * Starts {@code size} routed servers and waits until each has a route to every other one and
   * JetStream has elected its metadata leader.
   */
  public static NatsCluster start(int size) {
    if (size < 1) {
      throw new IllegalArgumentException("a cluster needs at least one server, got " + size);
    }
    for (int attempt = 1; ; attempt++) {
      NatsCluster cluster = create(size);
      try {
        for (NatsServer server : cluster.servers) {
          server.launchAndAwaitReady();
        }
        cluster.awaitFormed();
        return cluster;
      } catch (NatsServer.PortTakenException e) {
        cluster.close();
        if (attempt == START_ATTEMPTS) {
          throw e;
        }
      } catch (RuntimeException e) {
        cluster.close();
        throw e;
      }
    }
  }

  private static NatsCluster create(int size) {
    Set<Integer> taken = new HashSet<>();
    int[] clientPorts = new int[size];
    int[] monitorPorts = new int[size];
    int[] routePorts = new int[size];
    for (int i = 0; i < size; i++) {
      clientPorts[i] = distinctFreePort(taken);
      monitorPorts[i] = distinctFreePort(taken);
      routePorts[i] = distinctFreePort(taken);
    }
    String name = "testkit-" + clientPorts[0];
    List<NatsServer> servers = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      List<String> routes = new ArrayList<>();
      for (int j = 0; j < size; j++) {
        if (j != i) {
          routes.add("nats://127.0.0.1:" + routePorts[j]);
        }
      }
      List<String> args = new ArrayList<>();
      args.addAll(List.of("--cluster", "nats://127.0.0.1:" + routePorts[i]));
      args.addAll(List.of("--cluster_name", name));
      if (!routes.isEmpty()) {
        args.addAll(List.of("--routes", String.join(",", routes)));
      }
      servers.add(
          NatsServer.clusterMember(name + "-n" + (i + 1), clientPorts[i], monitorPorts[i], args));
    }
    return new NatsCluster(name, servers);
  }

  private static int distinctFreePort(Set<Integer> taken) {
    while (true) {
      int port = NatsServer.freePort();
      if (taken.add(port)) {
        return port;
      }
    }
  }

  /** The cluster name ({@code --cluster_name}). */
  public String name() {
    return name;
  }

  public List<NatsServer> servers() {
    return servers;
  }

  /** Server {@code index} (from 0). */
  public NatsServer server(int index) {
    return servers.get(index);
  }

  public int size() {
    return servers.size();
  }

  /** Every server's client URL, comma separated: what {@code --nats} takes for a cluster. */
  public String url() {
    return servers.stream().map(NatsServer::url).collect(Collectors.joining(","));
  }

  /** The server named {@code serverName}, e.g. a stream's leader in its cluster info. */
  public NatsServer named(String serverName) {
    return servers.stream()
        .filter(s -> s.name().equals(serverName))
        .findFirst()
        .orElseThrow(
            () -> new IllegalArgumentException("no server " + serverName + " in cluster " + name));
  }

  /** The server a client is connected to, by the URL the client reports. */
  public NatsServer serving(Connection connection) {
    String url = connection.getConnectedUrl();
    if (url == null) {
      throw new IllegalStateException("the connection is not connected to any server");
    }
    int port = URI.create(url).getPort();
    return servers.stream()
        .filter(s -> s.port() == port)
        .findFirst()
        .orElseThrow(() -> new IllegalStateException(url + " is not a server of cluster " + name));
  }

  /** The servers that run now. */
  public List<NatsServer> running() {
    return servers.stream().filter(NatsServer::isRunning).toList();
  }

  /**
   * A connection to any server that fails over to the others and reconnects quickly and forever.
   */
  public Connection connect() throws IOException, InterruptedException {
    return Nats.connect(
        new Options.Builder()
            .servers(servers.stream().map(NatsServer::url).toArray(String[]::new))
            .connectionName("testkit-cluster")
            .maxReconnects(-1)
            .reconnectWait(Duration.ofMillis(50))
            .connectionTimeout(Duration.ofSeconds(5))
            .build());
  }

  /**
   * Makes {@code server} the leader of {@code stream}: asks the leader to step down until an
   * election (which picks among the stream's current copies) lands on {@code server}. A test that
   * kills {@code server} then kills that stream's leader for sure.
   */
  public void makeLeader(Connection connection, String stream, NatsServer server) {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    String leader = "";
    while (System.nanoTime() < deadline) {
      try {
        leader =
            connection.jetStreamManagement().getStreamInfo(stream).getClusterInfo().getLeader();
        if (server.name().equals(leader)) {
          return;
        }
        connection.request(
            "$JS.API.STREAM.LEADER.STEPDOWN." + stream, new byte[0], Duration.ofSeconds(5));
      } catch (IOException | JetStreamApiException e) {
        // no leader between two elections: ask again
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while moving the leader of " + stream, e);
      }
      pause();
    }
    throw new IllegalStateException(
        server.name()
            + " did not become the leader of "
            + stream
            + " within "
            + READY_TIMEOUT
            + " (last leader "
            + leader
            + "): does it hold a copy?");
  }

  /**
   * Starts a killed or stopped server again on its ports and store, and waits until it rejoined.
   */
  public void restart(NatsServer server) {
    if (!servers.contains(server)) {
      throw new IllegalArgumentException(server + " is not a server of cluster " + name);
    }
    server.restart();
    awaitFormed();
  }

  /**
   * Waits until every running server has a route to each other running server, sees the same
   * JetStream metadata leader (one of the running servers) and reports itself healthy.
   */
  public void awaitFormed() {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    String lastState = "";
    while (true) {
      List<NatsServer> up = running();
      Set<String> upNames = up.stream().map(NatsServer::name).collect(Collectors.toSet());
      Set<String> leaders = new HashSet<>();
      boolean routed = true;
      boolean healthy = true;
      StringBuilder state = new StringBuilder();
      for (NatsServer server : up) {
        int routes = number(NUM_ROUTES, monitor(server, "/routez"));
        String leader = text(META_LEADER, monitor(server, "/jsz"));
        // ok once its JetStream reached the meta leader and its streams and consumers are current
        String health = monitor(server, "/healthz");
        state.append(server.name()).append(": routes ").append(routes);
        state.append(", meta leader ").append(leader).append(", health ").append(health);
        state.append("; ");
        routed &= routes == up.size() - 1;
        healthy &= health.contains("\"ok\"");
        leaders.add(leader);
      }
      lastState = state.toString();
      if (routed && healthy && leaders.size() == 1 && upNames.containsAll(leaders)) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "nats cluster " + name + " not formed after " + READY_TIMEOUT + ": " + lastState);
      }
      pause();
    }
  }

  private String monitor(NatsServer server, String path) {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(server.monitorUrl() + path))
            .timeout(Duration.ofSeconds(2))
            .build();
    try {
      return http.send(request, HttpResponse.BodyHandlers.ofString()).body();
    } catch (IOException e) {
      return "";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reading " + server.monitorUrl(), e);
    }
  }

  private static int number(Pattern pattern, String json) {
    Matcher m = pattern.matcher(json);
    return m.find() ? Integer.parseInt(m.group(1)) : -1;
  }

  private static String text(Pattern pattern, String json) {
    Matcher m = pattern.matcher(json);
    return m.find() ? m.group(1) : "";
  }

  private static void pause() {
    try {
      Thread.sleep(50); // polling the monitoring endpoints; there is nothing to wait on instead
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for the nats cluster", e);
    }
  }

  /** Kills every server and deletes their directories. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    RuntimeException first = null;
    for (NatsServer server : servers) {
      try {
        server.close();
      } catch (RuntimeException e) {
        first = first == null ? e : first;
      }
    }
    if (first != null) {
      throw first;
    }
  }

  @Override
  public String toString() {
    return "NatsCluster[" + name + ": " + servers + "]";
  }
}
