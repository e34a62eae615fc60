package org.rhumbatron.platform.natsserver;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.rhumbatron.protocol.RhumbatronException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@code nats-server} child process with JetStream and its store under the data directory, for
 * running core without a NATS of one's own. Production code; the tests' harness is in testkit.
 *
 * <p>It runs under a small {@code sh} supervisor started through {@code setsid}: in a session and
 * process group of its own, a terminal's Ctrl-C reaches only the JVM, which closes its connections
 * and then stops the server. The supervisor reads its stdin, a pipe from this JVM, and stops the
 * server when the pipe closes: on {@link #close} or when the kernel closes it after the JVM died,
 * even by SIGKILL, so no server outlives its owner.
 */
public final class PrivateNatsServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(PrivateNatsServer.class);
  private static final List<String> SEARCH_PATH =
      List.of("/usr/sbin", "/usr/bin", "/usr/local/bin");
  private static final Duration START_TIMEOUT = Duration.ofSeconds(20);
  private static final List<String> SETSID = List.of("/usr/bin/setsid", "/bin/setsid");
  // How long the supervisor waits after its SIGTERM before SIGKILL, in tenths of a second; the
  // JVM waits a little longer for the supervisor before it kills both.
  private static final int TERM_GRACE_TENTHS = 100;
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(TERM_GRACE_TENTHS / 10 + 5);

  /**
   * Runs {@code "$@"} (nats-server) in the background; a watcher waits for EOF on fd 3 (the JVM's
   * pipe, saved because a background job's stdin is /dev/null), then sends SIGTERM and SIGKILL
   * after the grace. The supervisor exits with the server's code and ends the watcher.
   */
  static final String SUPERVISOR =
      """
      exec 3<&0 </dev/null
      "$@" 3<&- &
      server=$!
      (
        while read -r line <&3; do :; done
        kill -TERM "$server" 2>/dev/null
        i=0
        while kill -0 "$server" 2>/dev/null && [ "$i" -lt %d ]; do sleep 0.1; i=$((i + 1)); done
        kill -KILL "$server" 2>/dev/null
      ) &
      watcher=$!
      exec 3<&-
      wait "$server"
      code=$?
      kill "$watcher" 2>/dev/null
      exit "$code"
      """
          .formatted(TERM_GRACE_TENTHS);

  // The supervisor (sh); the server is its child.
  private final Process process;
  private final int port;
  private final Path storeDir;
  // A JVM stopped by a signal (SIGTERM, Ctrl-C) runs its shutdown hooks but not the finally blocks
  // that would close this server: the hook stops it, so it does not outlive the JVM that owns it.
  // Hooks run at the same time, so it first gives the owner's own hook (core's orderly stop) a
  // moment to close its connections and then this server; stopping it under them logs errors.
  private final Thread stopOnExit;
  private final CountDownLatch closed = new CountDownLatch(1);
  private static final Duration OWNER_GRACE = Duration.ofSeconds(5);

  private PrivateNatsServer(Process process, int port, Path storeDir) {
    this.process = process;
    this.port = port;
    this.storeDir = storeDir;
    this.stopOnExit = new Thread(this::stopUnlessClosed, "private-nats-server-stop");
    Runtime.getRuntime().addShutdownHook(stopOnExit);
  }

  /** Thrown when the binary is missing or the server does not come up. */
  public static final class NatsServerException extends RhumbatronException {
    public NatsServerException(String message) {
      super(message);
    }
  }

  /**
   * Starts {@code nats-server} on 127.0.0.1 at {@code port} (0 = a free one) under {@code dataDir}.
   */
  public static PrivateNatsServer start(Path dataDir, int port) {
    return start(dataDir, port, List.of());
  }

  /**
   * As {@link #start(Path, int)}, with {@code extraArgs} after the server's own (a cluster member's
   * {@code --cluster}, {@code --routes} and name).
   */
  public static PrivateNatsServer start(Path dataDir, int port, List<String> extraArgs) {
    Path binary = findBinary();
    try {
      Path storeDir = dataDir.resolve("nats");
      Files.createDirectories(storeDir);
      int chosen = port == 0 ? freePort() : port;
      Path logFile = dataDir.resolve("nats-server.log");
      List<String> command = new ArrayList<>(supervised());
      command.addAll(
          List.of(
              binary.toString(),
              "-js",
              "-a",
              "127.0.0.1",
              "-p",
              Integer.toString(chosen),
              "-sd",
              storeDir.toString(),
              "-l",
              logFile.toString()));
      command.addAll(extraArgs);
      Process process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
              .start();
      PrivateNatsServer server = new PrivateNatsServer(process, chosen, storeDir);
      try {
        server.awaitReady(logFile);
      } catch (RuntimeException e) {
        server.close();
        throw e;
      }
      log.info(
          "started a private nats-server (pid {}, supervisor pid {}) on {} with its store in {}",
          server.serverPid(),
          process.pid(),
          server.url(),
          storeDir);
      return server;
    } catch (IOException e) {
      throw new NatsServerException("cannot start nats-server: " + e.getMessage());
    }
  }

  /**
   * The command before the server's: {@code setsid sh -c SUPERVISOR}. Without setsid (util-linux,
   * on every Debian) the server shares the JVM's process group, and a terminal's Ctrl-C reaches it.
   */
  private static List<String> supervised() {
    List<String> command = new ArrayList<>();
    SETSID.stream()
        .filter(p -> Files.isExecutable(Path.of(p)))
        .findFirst()
        .ifPresentOrElse(
            command::add,
            () ->
                log.warn(
                    "setsid not found (Debian package util-linux): the private nats-server shares"
                        + " core's process group, so a terminal's Ctrl-C stops it under core"));
    command.addAll(List.of("/bin/sh", "-c", SUPERVISOR, "nats-server-supervisor"));
    return command;
  }

  /** The server's own pid (the supervisor's child), or -1 when it is gone. */
  public long serverPid() {
    return process
        .toHandle()
        .children()
        .filter(c -> c.info().command().map(cmd -> cmd.endsWith("nats-server")).orElse(false))
        .mapToLong(ProcessHandle::pid)
        .findFirst()
        .orElse(-1);
  }

  /**
   * The binary on PATH or in the usual Debian places; a clear error naming the package if absent.
   */
  public static Path findBinary() {
    return findBinary(System.getenv().getOrDefault("PATH", ""), SEARCH_PATH);
  }

  static Path findBinary(String path, List<String> fallbackDirs) {
    for (String dir : path.split(File.pathSeparator)) {
      Path candidate = Path.of(dir.isEmpty() ? "." : dir, "nats-server");
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    for (String dir : fallbackDirs) {
      Path candidate = Path.of(dir, "nats-server");
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    throw new NatsServerException(
        "nats-server not found on PATH: install it with `apt-get install -y nats-server`"
            + " (Debian package nats-server), or pass --nats URL");
  }

  public String url() {
    return "nats://127.0.0.1:" + port;
  }

  public Path storeDir() {
    return storeDir;
  }

  private void awaitReady(Path logFile) {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new NatsServerException(
            "nats-server exited with code " + process.exitValue() + "; see " + logFile);
      }
      try (Socket socket = new Socket()) {
        socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return;
      } catch (IOException notYet) {
        try {
          process.waitFor(50, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new NatsServerException("interrupted while waiting for nats-server");
        }
      }
    }
    throw new NatsServerException(
        "nats-server did not accept connections within " + START_TIMEOUT + "; see " + logFile);
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  /** SIGTERM, then wait (SIGKILL after a timeout); the server flushes its store on a clean stop. */
  @Override
  public void close() {
    try {
      Runtime.getRuntime().removeShutdownHook(stopOnExit);
    } catch (IllegalStateException shuttingDown) {
      // The JVM is already stopping: the hook runs (or ran) the same stop.
    }
    stop();
    closed.countDown();
  }

  private void stopUnlessClosed() {
    try {
      if (closed.await(OWNER_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
        return;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    stop();
  }

  /**
   * Closes the supervisor's pipe, so that it sends SIGTERM and, after its grace, SIGKILL; kills
   * both itself only when the supervisor does not end in time.
   */
  private void stop() {
    try {
      process.getOutputStream().close();
    } catch (IOException alreadyClosed) {
      // the supervisor's stdin is closed already: it is stopping the server
    }
    try {
      if (!process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        killAll();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      killAll();
    }
  }

  private void killAll() {
    process.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
  }
}
