package org.rhumbatron.testkit.nats;

import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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

  static final String BINARY_NAME = "nats-server";
  private static final Logger log = LoggerFactory.getLogger(NatsServer.class);
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
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
  private volatile Process process;
  private boolean closed;

  private NatsServer(Path binary, Path workDir, List<String> clusterArgs) {
    this.binary = binary;
    this.workDir = workDir;
    this.storeDir = workDir.resolve("store");
    this.logFile = workDir.resolve("nats-server.log");
    this.clusterArgs = List.copyOf(clusterArgs);
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
    Cleanup.register(server);
    return server;
  }

  /**
   * {@code nats-server} from the PATH, else {@code /usr/sbin} (where Debian installs it, often not
   * on a user's PATH).
   */
  public static Path findBinary() {
    return findBinary(
        System.getenv("PATH"),
        Path.of("/usr/sbin", BINARY_NAME),
        Path.of("/usr/local/sbin", BINARY_NAME));
  }

  /** {@code nats-server} in one of the directories of {@code pathVariable}, else a fallback. */
  public static Path findBinary(String pathVariable, Path... fallbacks) {
    List<Path> candidates = new ArrayList<>();
    if (pathVariable != null) {
      for (String dir : pathVariable.split(File.pathSeparator)) {
        if (!dir.isBlank()) {
          candidates.add(Path.of(dir, BINARY_NAME));
        }
      }
    }
    candidates.addAll(List.of(fallbacks));
    for (Path candidate : candidates) {
      if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    throw new IllegalStateException(
        "nats-server not found on the PATH or in /usr/sbin: install the Debian package"
            + " 'nats-server' (apt-get install nats-server)");
  }

  /** A TCP port that was free on 127.0.0.1 a moment ago; never {@link #SHARED_PORT}. */
  public static int freePort() {
    for (int i = 0; i < 100; i++) {
      try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        int candidate = socket.getLocalPort();
        if (candidate != SHARED_PORT) {
          return candidate;
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot find a free port", e);
      }
    }
    throw new IllegalStateException("no free port found on 127.0.0.1");
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
    return process != null && process.isAlive();
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
    signal("-STOP");
  }

  /** SIGCONT after {@link #pause()}: the server reads what its clients sent meanwhile. */
  public synchronized void resume() {
    signal("-CONT");
  }

  private void signal(String signal) {
    requireRunning();
    try {
      Process kill = new ProcessBuilder("kill", signal, Long.toString(process.pid())).start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill " + signal + " " + process.pid() + " failed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run kill " + signal, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while signalling nats-server", e);
    }
  }

  /** SIGKILL: the server gets no chance to flush or write its index files. */
  public synchronized void kill() {
    if (process == null) {
      return;
    }
    process.destroyForcibly();
    awaitExit(process);
    process = null;
  }

  /** SIGTERM, then waits until the server has shut down (SIGKILL after 30 s). */
  public synchronized void stop() {
    if (process == null) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        log.warn("nats-server on port {} ignored SIGTERM for {}; killing it", port, STOP_TIMEOUT);
        process.destroyForcibly();
        awaitExit(process);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
    process = null;
  }

  /** Starts the server again on the same port and store (stopping it first if it runs). */
  public synchronized void restart() {
    requireOpen();
    stop();
    launch();
    awaitReady();
  }

  /** Kills the server and deletes its temporary directory. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    kill();
    deleteRecursively(workDir);
    Cleanup.unregister(this);
  }

  /** For the shutdown hook: no lock, since a stuck test thread may hold it. */
  private void emergencyCleanup() {
    Process running = process;
    if (running != null) {
      running.destroyForcibly();
      try {
        running.waitFor(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    deleteRecursively(workDir);
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
      awaitReady();
    } catch (IllegalStateException e) {
      // Another process may take a port between freePort() and the server's bind.
      boolean portTaken =
          process != null && !process.isAlive() && logMentions("address already in use");
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
    try {
      Files.writeString(
          logFile,
          "=== " + String.join(" ", command) + System.lineSeparator(),
          StandardCharsets.UTF_8,
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
      process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + binary, e);
    }
  }

  /**
   * The client port opens only after JetStream has recovered its store, so the first INFO line on
   * it means the server is ready.
   */
  private void awaitReady() {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    while (true) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "nats-server exited with code "
                + process.exitValue()
                + " while starting; log tail:\n"
                + logTail());
      }
      if (sendsInfo()) {
        log.debug("nats-server ready at {} (store {})", url(), storeDir);
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "nats-server not ready on "
                + url()
                + " after "
                + READY_TIMEOUT
                + "; log tail:\n"
                + logTail());
      }
      try {
        // Waiting on the process (not sleeping blindly) also returns at once if it dies.
        process.waitFor(10, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for nats-server", e);
      }
    }
  }

  private boolean sendsInfo() {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
      socket.setSoTimeout(2_000);
      BufferedReader reader =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
      String line = reader.readLine();
      return line != null && line.startsWith("INFO");
    } catch (IOException e) {
      return false;
    }
  }

  private boolean logMentions(String text) {
    return logTail().contains(text);
  }

  private String logTail() {
    try {
      List<String> lines = Files.readAllLines(logFile, StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
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

  private static void awaitExit(Process process) {
    try {
      if (!process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException("nats-server pid " + process.pid() + " did not exit");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (var paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(NatsServer::deleteQuietly);
    } catch (IOException e) {
      log.warn("cannot delete {}: {}", dir, e.toString());
    }
  }

  private static void deleteQuietly(Path path) {
    try {
      Files.deleteIfExists(path);
    } catch (IOException e) {
      log.warn("cannot delete {}: {}", path, e.toString());
    }
  }

  @Override
  public String toString() {
    return "NatsServer[" + name() + ", " + url() + ", store " + storeDir + "]";
  }

  /** Last resort: kill and delete what tests left behind when the JVM exits. */
  private static final class Cleanup {
    private static final Set<NatsServer> live = ConcurrentHashMap.newKeySet();

    static {
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    for (NatsServer server : List.copyOf(live)) {
                      server.emergencyCleanup();
                    }
                  },
                  "nats-server-cleanup"));
    }

    static void register(NatsServer server) {
      live.add(server);
    }

    static void unregister(NatsServer server) {
      live.remove(server);
    }
  }
}
