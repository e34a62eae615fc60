package org.rhumbatron.testkit.nats;

import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A private {@code nats-server} with JetStream for one test (or one test class): bound to 127.0.0.1
 * on a free port (never 4222, the machine's shared server), its store and log in a temporary
 * directory. It can be killed with SIGKILL, stopped with SIGTERM and restarted on the same port and
 * store, which is what the durability tests need. {@link #close()} kills it and deletes the
 * directory; a JVM shutdown hook does the same for servers a test forgot.
 */
public final class NatsServer implements AutoCloseable {
  /** The port of the machine's shared server; a test server must never take it. */
  public static final int SHARED_PORT = 4222;

  private static final int START_ATTEMPTS = 5;

  private final Path binary;
  private final Path workDir;
  private final Path storeDir;
  private final Path logFile;
  // Cluster flags (routes, cluster name) of a server that is one of a NatsCluster; else empty.
  private final List<String> clusterArgs;
  private String serverName;
  private int port;
  private int monitorPort;
  private final NatsProcess process;
  // Registered with NatsCleanup while the server is open.
  private final Runnable emergencyCleanup = this::emergencyCleanup;
  private boolean closed;

  private NatsServer(Path binary, Path workDir, List<String> clusterArgs) {
    this.binary = binary;
    this.workDir = workDir;
    this.storeDir = workDir.resolve("store");
    this.logFile = workDir.resolve("nats-server.log");
    this.clusterArgs = List.copyOf(clusterArgs);
    this.process = new NatsProcess(logFile);
  }

  /** Starts a server in a new temporary directory and waits until it accepts connections. */
  public static NatsServer start() {
    NatsServer server = create(List.of());
    try {
      server.startOnFreePort();
    } catch (RuntimeException e) {
      server.close();
      throw e;
    }
    return server;
  }

  /**
   * A server of a {@link NatsCluster} on the given ports, with {@code clusterArgs} added to its
   * command line; not started yet ({@link #launchAndAwaitReady}).
   */
  static NatsServer clusterMember(
      String serverName, int port, int monitorPort, List<String> clusterArgs) {
    NatsServer server = create(clusterArgs);
    server.serverName = serverName;
    server.port = port;
    server.monitorPort = monitorPort;
    return server;
  }

  private static NatsServer create(List<String> clusterArgs) {
    Path binary = findBinary();
    Path workDir;
    try {
      workDir = Files.createTempDirectory("rhumbatron-nats-");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a temporary directory for nats-server", e);
    }
    NatsServer server = new NatsServer(binary, workDir, clusterArgs);
    NatsCleanup.register(server.emergencyCleanup);
    return server;
  }

  /**
   * {@code nats-server} from the PATH, else {@code /usr/sbin} (where Debian installs it, often not
   * on a user's PATH).
   */
  public static Path findBinary() {
    return findBinary(
        System.getenv("PATH"),
        Path.of("/usr/sbin", NatsHost.BINARY_NAME),
        Path.of("/usr/local/sbin", NatsHost.BINARY_NAME));
  }

  /** {@code nats-server} in one of the directories of {@code pathVariable}, else a fallback. */
  public static Path findBinary(String pathVariable, Path... fallbacks) {
    return NatsHost.findBinary(pathVariable, fallbacks);
  }

  /** A TCP port that was free on 127.0.0.1 a moment ago; never {@link #SHARED_PORT}. */
  public static int freePort() {
    return NatsHost.freePort(SHARED_PORT);
  }

  public String url() {
    return "nats://127.0.0.1:" + port;
  }

  public int port() {
    return port;
  }

  /** The server's name ({@code -n}), as JetStream names a stream's leader and replicas. */
  public String name() {
    return serverName != null ? serverName : "testkit-" + port;
  }

  /**
   * The HTTP monitoring endpoint ({@code /varz}, {@code /connz}, {@code /jsz}, {@code /healthz}).
   */
  public String monitorUrl() {
    return "http://127.0.0.1:" + monitorPort;
  }

  /**
   * The JetStream store directory ({@code -sd}); streams live under {@code jetstream/$G/streams}.
   */
  public Path storeDir() {
    return storeDir;
  }

  /** Where the file store keeps one stream's message blocks, for tests that damage a store. */
  public Path streamDir(String stream) {
    return storeDir.resolve("jetstream").resolve("$G").resolve("streams").resolve(stream);
  }

  /** The server's log (stdout and stderr), appended across restarts. */
  public Path logFile() {
    return logFile;
  }

  public synchronized boolean isRunning() {
    return process.isRunning();
  }

  /** The OS process id of the running server. */
  public synchronized long pid() {
    requireRunning();
    return process.pid();
  }

  /** A connection that reconnects quickly and forever, so it survives {@link #restart()}. */
  public Connection connect() throws IOException, InterruptedException {
    return Nats.connect(
        new Options.Builder()
            .server(url())
            .connectionName("testkit")
            .maxReconnects(-1)
            .reconnectWait(Duration.ofMillis(50))
            .connectionTimeout(Duration.ofSeconds(5))
            .build());
  }

  /**
   * SIGSTOP: the server holds its connections but reads and answers nothing until {@link
   * #resume()}, as a server stalled by its machine would.
   */
  public synchronized void pause() {
    requireRunning();
    process.signal("-STOP");
  }

  /** SIGCONT after {@link #pause()}: the server reads what its clients sent meanwhile. */
  public synchronized void resume() {
    requireRunning();
    process.signal("-CONT");
  }

  /** SIGKILL: the server gets no chance to flush or write its index files. */
  public synchronized void kill() {
    process.kill();
  }

  /** SIGTERM, then waits until the server has shut down (SIGKILL after 30 s). */
  public synchronized void stop() {
    process.stop("on port " + port);
  }

  /** Starts the server again on the same port and store (stopping it first if it runs). */
  public synchronized void restart() {
    requireOpen();
    stop();
    launch();
    process.awaitReady(url(), port);
  }

  /** Kills the server and deletes its temporary directory. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    kill();
    NatsCleanup.deleteRecursively(workDir);
    NatsCleanup.unregister(emergencyCleanup);
  }

  /** For the shutdown hook: no lock, since a stuck test thread may hold it. */
  private void emergencyCleanup() {
    process.emergencyKill();
    NatsCleanup.deleteRecursively(workDir);
  }

  private void startOnFreePort() {
    for (int attempt = 1; ; attempt++) {
      port = freePort();
      do {
        monitorPort = freePort();
      } while (monitorPort == port);
      try {
        launchAndAwaitReady();
        return;
      } catch (PortTakenException e) {
        if (attempt == START_ATTEMPTS) {
          throw e;
        }
      }
    }
  }

  /**
   * Starts the process on the chosen ports and waits until it accepts connections.
   *
   * @throws PortTakenException when another process took one of its ports since it was chosen
   */
  synchronized void launchAndAwaitReady() {
    requireOpen();
    launch();
    try {
      process.awaitReady(url(), port);
    } catch (IllegalStateException e) {
      // Another process may take a port between freePort() and the server's bind.
      boolean portTaken = process.exited() && process.logMentions("address already in use");
      kill();
      throw portTaken ? new PortTakenException(e) : e;
    }
  }

  /** A port chosen free was taken by another process before the server could bind it. */
  static final class PortTakenException extends IllegalStateException {
    PortTakenException(IllegalStateException cause) {
      super(cause.getMessage(), cause);
    }
  }

  private void launch() {
    List<String> command = new ArrayList<>();
    command.addAll(
        List.of(
            binary.toString(),
            "-js",
            "-a",
            "127.0.0.1",
            "-p",
            Integer.toString(port),
            "-m",
            Integer.toString(monitorPort),
            "-sd",
            storeDir.toString(),
            "-n",
            name()));
    command.addAll(clusterArgs);
    process.launch(command);
  }

  private void requireRunning() {
    if (!isRunning()) {
      throw new IllegalStateException("nats-server on port " + port + " is not running");
    }
  }

  private void requireOpen() {
    if (closed) {
      throw new IllegalStateException("nats-server handle is closed");
    }
  }

  @Override
  public String toString() {
    return "NatsServer[" + name() + ", " + url() + ", store " + storeDir + "]";
  }
}
