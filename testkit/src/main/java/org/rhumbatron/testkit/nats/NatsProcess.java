package org.rhumbatron.testkit.nats;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The OS process of one {@link NatsServer}: started from a command line with its output appended to
 * the server's log, waited for until its client port answers, signalled, stopped or killed. Not
 * thread-safe: {@link NatsServer} holds its lock around each call.
 */
final class NatsProcess {
  private static final Logger log = LoggerFactory.getLogger(NatsProcess.class);
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

  private final Path logFile;
  // Read without the lock by the shutdown hook.
  private volatile Process process;

  NatsProcess(Path logFile) {
    this.logFile = logFile;
  }

  boolean isRunning() {
    return process != null && process.isAlive();
  }

  /** Whether it was started and has exited since (not stopped or killed by us). */
  boolean exited() {
    return process != null && !process.isAlive();
  }

  long pid() {
    return process.pid();
  }

  /** Starts {@code command}, its line first written to the log. */
  void launch(List<String> command) {
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
      throw new UncheckedIOException("cannot start " + command.get(0), e);
    }
  }

  /**
   * The client port opens only after JetStream has recovered its store, so the first INFO line on
   * it means the server is ready.
   */
  void awaitReady(String url, int port) {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    while (true) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "nats-server exited with code "
                + process.exitValue()
                + " while starting; log tail:\n"
                + logTail());
      }
      if (sendsInfo(port)) {
        log.debug("nats-server ready at {}", url);
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "nats-server not ready on "
                + url
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

  private static boolean sendsInfo(int port) {
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

  /** Sends {@code signal} ({@code -STOP}, {@code -CONT}) with kill(1). */
  void signal(String signal) {
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
  void kill() {
    if (process == null) {
      return;
    }
    process.destroyForcibly();
    awaitExit(process);
    process = null;
  }

  /** SIGTERM, then waits until the server has shut down (SIGKILL after 30 s). */
  void stop(String name) {
    if (process == null) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        log.warn("nats-server {} ignored SIGTERM for {}; killing it", name, STOP_TIMEOUT);
        process.destroyForcibly();
        awaitExit(process);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
    process = null;
  }

  /** For the shutdown hook: kills without waiting long, whatever lock a test thread holds. */
  void emergencyKill() {
    Process running = process;
    if (running != null) {
      running.destroyForcibly();
      try {
        running.waitFor(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  boolean logMentions(String text) {
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

  private static void awaitExit(Process process) {
    try {
      if (!process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException("nats-server pid " + process.pid() + " did not exit");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
