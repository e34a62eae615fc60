package org.rhumbatron.checker;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.server.CoreChild;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cores of a check, each a child process on an HTTP port of its own, with its own data
 * directory and its output in {@code core-N.log} (one file per start). The check names each start's
 * node ({@code cluster.node-id}), so a fault knows its target's node id even when the core never
 * answered. A core exit that no fault asked for is a crash: it is recorded with its log's tail and
 * that core starts again.
 */
final class CheckCores implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(CheckCores.class);
  private static final int LOG_TAIL_LINES = 12;

  /**
   * One core's place: its directory stays across restarts; its port too, unless another process
   * took it while the core was down.
   */
  private static final class Slot {
    final int index;
    int httpPort;
    int starts;
    String nodeId;
    Process process;
    boolean expectedDown;
    boolean paused;

    Slot(int index, int httpPort) {
      this.index = index;
      this.httpPort = httpPort;
    }
  }

  private final Path dir;
  private final String dbUrl;
  private final Path config;
  private final String token;
  private final Supplier<String> natsUrl;
  private final List<Slot> slots = new ArrayList<>();
  private final List<Path> logs = new CopyOnWriteArrayList<>();
  private final List<String> crashes = new CopyOnWriteArrayList<>();
  private boolean closed;

  CheckCores(Path dir, int count, String dbUrl, Path config, String token, Supplier<String> natsUrl)
      throws IOException {
    this.dir = dir;
    this.dbUrl = dbUrl;
    this.config = config;
    this.token = token;
    this.natsUrl = natsUrl;
    for (int i = 0; i < count; i++) {
      slots.add(new Slot(i, freePort()));
    }
  }

  int count() {
    return slots.size();
  }

  synchronized String apiUrl(int i) {
    return "http://127.0.0.1:" + slots.get(i).httpPort;
  }

  /** The node id of core {@code i}'s current (or last) start. */
  synchronized String nodeId(int i) {
    return slots.get(i).nodeId;
  }

  /** The cores a load balancer would send to now: running and not paused. */
  synchronized List<String> liveApiUrls() {
    List<String> out = new ArrayList<>();
    for (Slot s : slots) {
      if (s.process != null && s.process.isAlive() && !s.paused && !s.expectedDown) {
        out.add(apiUrl(s.index));
      }
    }
    return out;
  }

  /** Every core's address, running or not. */
  synchronized List<String> apiUrls() {
    return slots.stream().map(s -> apiUrl(s.index)).toList();
  }

  /**
   * Where core {@code i} keeps its files. A single core keeps the layout of earlier checks, {@code
   * dir/core}, where the directory bucket of the audit archive lies.
   */
  Path dataDir(int i) {
    return slots.size() == 1 ? dir.resolve("core") : dir.resolve("core-" + (i + 1));
  }

  List<Path> logs() {
    return List.copyOf(logs);
  }

  List<String> crashes() {
    return List.copyOf(crashes);
  }

  synchronized void startAll() throws IOException {
    for (Slot s : slots) {
      start(s.index);
    }
  }

  synchronized void start(int i) throws IOException {
    Slot slot = slots.get(i);
    if (slot.process != null && slot.process.isAlive()) {
      return;
    }
    Path logFile = dir.resolve("core-" + (logs.size() + 1) + ".log");
    logs.add(logFile);
    if (slot.starts > 0 && !isFree(slot.httpPort)) {
      int taken = slot.httpPort;
      slot.httpPort = freePort();
      log.warn(
          "core {}: port {} was taken while it was down; it moves to {}",
          i + 1,
          taken,
          slot.httpPort);
    }
    slot.starts++;
    slot.nodeId = "check-core" + (i + 1) + "-" + slot.starts;
    List<String> command =
        CoreChild.command(natsUrl.get(), dataDir(i), dbUrl, slot.httpPort, config);
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
    builder.environment().put("RHUMBATRON_API_TOKEN", token);
    builder.environment().put(Settings.CLUSTER_NODE_ID.envName(), slot.nodeId);
    Process started = builder.start();
    slot.process = started;
    slot.expectedDown = false;
    slot.paused = false;
    started.onExit().thenAccept(p -> exited(slot, p, logFile));
  }

  private void exited(Slot slot, Process p, Path logFile) {
    synchronized (this) {
      if (p != slot.process || slot.expectedDown || closed) {
        return;
      }
      crashes.add(
          "core pid "
              + p.pid()
              + " exited with code "
              + p.exitValue()
              + " ("
              + logFile
              + "): "
              + tail(logFile));
      log.error(
          "core {} exited with code {} on its own; see {}", slot.index + 1, p.exitValue(), logFile);
    }
    try {
      start(slot.index);
    } catch (IOException e) {
      crashes.add("core " + (slot.index + 1) + " could not start again: " + e.getMessage());
    }
  }

  /** SIGKILL of core {@code i}; it starts again on {@link #start}. */
  synchronized void kill(int i) throws InterruptedException {
    Slot slot = slots.get(i);
    if (slot.process == null) {
      return;
    }
    slot.expectedDown = true;
    slot.process.destroyForcibly();
    slot.process.waitFor(30, TimeUnit.SECONDS);
  }

  synchronized void killAll() throws InterruptedException {
    for (Slot s : slots) {
      kill(s.index);
    }
  }

  /** SIGSTOP of core {@code i}: it holds its leases and connections but runs nothing. */
  synchronized void pause(int i) throws Exception {
    Slot slot = slots.get(i);
    Signals.send(slot.process.pid(), "STOP", "core " + (i + 1));
    slot.paused = true;
  }

  synchronized void resume(int i) throws Exception {
    Slot slot = slots.get(i);
    Signals.send(slot.process.pid(), "CONT", "core " + (i + 1));
    slot.paused = false;
  }

  /** SIGTERM and wait: core's own orderly stop. */
  synchronized void stop(int i) throws InterruptedException {
    Slot slot = slots.get(i);
    if (slot.process == null) {
      return;
    }
    slot.expectedDown = true;
    if (slot.paused) {
      slot.process.destroyForcibly(); // a stopped process cannot run its orderly stop
    } else {
      slot.process.destroy();
    }
    if (!slot.process.waitFor(60, TimeUnit.SECONDS)) {
      slot.process.destroyForcibly();
      slot.process.waitFor(30, TimeUnit.SECONDS);
    }
  }

  synchronized void stopAll() throws InterruptedException {
    for (Slot s : slots) {
      stop(s.index);
    }
  }

  private static String tail(Path logFile) {
    try {
      List<String> lines = Files.readAllLines(logFile, StandardCharsets.ISO_8859_1);
      return String.join(
          " | ", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
    } catch (IOException e) {
      return "(log unreadable: " + e.getMessage() + ")";
    }
  }

  private static boolean isFree(int port) {
    try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * A port free a moment ago, below Linux's ephemeral range (32768-60999): the kernel never hands
   * it to a client socket, so a core or nats-server the check restarts finds its port free. The
   * test kit's servers take 20000-25999, so tests run beside a check cannot take its ports either.
   */
  static int freePort() throws IOException {
    for (int i = 0; i < 200; i++) {
      int candidate = ThreadLocalRandom.current().nextInt(26_000, 32_000);
      try (ServerSocket socket = new ServerSocket()) {
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), candidate), 1);
        return candidate;
      } catch (IOException taken) {
        // try another
      }
    }
    throw new IOException("no free port found on 127.0.0.1 between 26000 and 32000");
  }

  @Override
  public void close() throws Exception {
    synchronized (this) {
      closed = true;
    }
    stopAll();
  }
}
