package org.rhumbatron.app.check;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.rhumbatron.app.Main;
import org.rhumbatron.platform.natsserver.NatsStoreDamage;
import org.rhumbatron.platform.natsserver.PrivateNatsServer;
import org.rhumbatron.platform.net.TcpProxy;
import org.rhumbatron.protocol.EventStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a check runs and breaks: a private {@code nats-server} on a fixed port (so a restart keeps
 * its address), a {@link TcpProxy} between core and it, and core as a child process on the fixed
 * HTTP port, its output in {@code core-N.log}. A core exit that no fault asked for is a crash: it
 * is recorded with its log's tail and core starts again.
 */
final class CheckCluster implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(CheckCluster.class);
  private static final int LOG_TAIL_LINES = 12;

  private final Path dir;
  private final String dbUrl;
  private final Path config;
  private final String token;
  private final int natsPort;
  private final int httpPort;
  private final TcpProxy proxy;
  private final List<Path> coreLogs = new CopyOnWriteArrayList<>();
  private final List<String> crashes = new CopyOnWriteArrayList<>();
  private PrivateNatsServer nats;
  private Process core;
  private boolean coreExpectedDown;
  private boolean closed;

  CheckCluster(Path dir, String dbUrl, Path config, String token) throws IOException {
    this.dir = dir;
    this.dbUrl = dbUrl;
    this.config = config;
    this.token = token;
    this.natsPort = freePort();
    this.httpPort = freePort();
    this.proxy = TcpProxy.start("127.0.0.1", natsPort);
  }

  String dbUrl() {
    return dbUrl;
  }

  String apiUrl() {
    return "http://127.0.0.1:" + httpPort;
  }

  /** The server's own address, not through the proxy: the checker reads the streams here. */
  String natsUrl() {
    return "nats://127.0.0.1:" + natsPort;
  }

  TcpProxy proxy() {
    return proxy;
  }

  Path archiveRoot() {
    return dir.resolve("core").resolve(org.rhumbatron.platform.bucket.Bucket.EVIDENCE);
  }

  List<Path> coreLogs() {
    return List.copyOf(coreLogs);
  }

  List<String> crashes() {
    return List.copyOf(crashes);
  }

  synchronized void startNats() {
    if (nats == null) {
      nats = PrivateNatsServer.start(dir, natsPort);
    }
  }

  synchronized boolean natsUp() {
    return nats != null;
  }

  /** SIGKILL of the server: nothing flushed, nothing said to the clients. */
  synchronized void killNats() throws Exception {
    if (nats == null) {
      return;
    }
    signal(nats.serverPid(), "KILL");
    nats.close();
    nats = null;
  }

  synchronized void pauseNats() throws Exception {
    signal(nats.serverPid(), "STOP");
  }

  synchronized void resumeNats() throws Exception {
    signal(nats.serverPid(), "CONT");
  }

  /**
   * SIGKILL, the last block file of one event stream cut by {@code messages}, start again: events
   * the server had acknowledged are gone, and only the outbox can send them again.
   */
  synchronized List<Long> loseTail(int stream, int messages) throws Exception {
    killNats();
    Path streamDir =
        dir.resolve("nats")
            .resolve("jetstream")
            .resolve("$G")
            .resolve("streams")
            .resolve(EventStreams.streamName(stream));
    try {
      return Files.isDirectory(streamDir)
          ? NatsStoreDamage.cutLastMessages(streamDir, messages)
          : List.of();
    } finally {
      startNats(); // also when the cut failed: the run goes on or closes a server that runs
    }
  }

  synchronized void startCore() throws IOException {
    if (core != null && core.isAlive()) {
      return;
    }
    Path logFile = dir.resolve("core-" + (coreLogs.size() + 1) + ".log");
    coreLogs.add(logFile);
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx1g");
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(Main.class.getName());
    command.addAll(
        List.of(
            "core",
            "--nats",
            proxy.natsUrl(),
            "--data",
            dir.resolve("core").toString(),
            "--db",
            dbUrl,
            "--http",
            Integer.toString(httpPort),
            "--config",
            config.toString()));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
    builder.environment().put("RHUMBATRON_API_TOKEN", token);
    Process started = builder.start();
    core = started;
    coreExpectedDown = false;
    started.onExit().thenAccept(p -> exited(p, logFile));
  }

  private void exited(Process p, Path logFile) {
    synchronized (this) {
      if (p != core || coreExpectedDown || closed) {
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
      log.error("core exited with code {} on its own; see {}", p.exitValue(), logFile);
    }
    try {
      startCore();
    } catch (IOException e) {
      crashes.add("core could not start again: " + e.getMessage());
    }
  }

  /** SIGKILL of core; it starts again on {@link #startCore}. */
  synchronized void killCore() throws InterruptedException {
    if (core == null) {
      return;
    }
    coreExpectedDown = true;
    core.destroyForcibly();
    core.waitFor(30, TimeUnit.SECONDS);
  }

  /** SIGTERM and wait: core's own orderly stop. */
  synchronized void stopCore() throws InterruptedException {
    if (core == null) {
      return;
    }
    coreExpectedDown = true;
    core.destroy();
    if (!core.waitFor(60, TimeUnit.SECONDS)) {
      core.destroyForcibly();
      core.waitFor(30, TimeUnit.SECONDS);
    }
  }

  private static void signal(long pid, String signal) throws Exception {
    if (pid <= 0) {
      throw new IllegalStateException("nats-server has no pid to send SIG" + signal + " to");
    }
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
    if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
      throw new IllegalStateException("kill -" + signal + " " + pid + " failed");
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

  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  @Override
  public void close() throws Exception {
    synchronized (this) {
      closed = true;
    }
    try {
      stopCore();
    } finally {
      try {
        proxy.close();
      } finally {
        synchronized (this) {
          if (nats != null) {
            nats.close();
            nats = null;
          }
        }
      }
    }
  }
}
