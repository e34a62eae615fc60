package org.rhumbatron.testkit.nats;

import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A nats-server run from a configuration file of the test's own (TLS, users, operator mode), on a
 * free loopback port with its JetStream store in {@code dir}; stopped by {@link #close}.
 */
public final class ConfiguredNatsServer implements AutoCloseable {
  // Tries 100 ms apart: 20 s.
  private static final int READY_TRIES = 200;
  private final Process process;
  private final int port;

  private ConfiguredNatsServer(Process process, int port) {
    this.process = process;
    this.port = port;
  }

  /**
   * Starts nats-server with {@code settings} (lines of its configuration) after the listen address
   * and JetStream store this class chooses; returns when its port answers.
   */
  public static ConfiguredNatsServer start(Path dir, String... settings) throws IOException {
    int port = NatsServer.freePort();
    Path conf = dir.resolve("nats.conf");
    StringBuilder text = new StringBuilder();
    text.append("listen: 127.0.0.1:").append(port).append('\n');
    text.append("jetstream { store_dir: \"").append(dir.resolve("js")).append("\" }\n");
    for (String line : settings) {
      text.append(line).append('\n');
    }
    Files.writeString(conf, text);
    Process process =
        new ProcessBuilder(NatsServer.findBinary().toString(), "-c", conf.toString())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("nats.log").toFile())
            .start();
    ConfiguredNatsServer server = new ConfiguredNatsServer(process, port);
    for (int i = 0; !server.listening(); i++) {
      if (i == READY_TRIES || !process.isAlive()) {
        process.destroyForcibly();
        throw new IOException(
            "nats-server with " + conf + " did not answer on port " + port + "; see its nats.log");
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        process.destroyForcibly();
        throw new IOException("interrupted while nats-server started", e);
      }
    }
    return server;
  }

  public int port() {
    return port;
  }

  private boolean listening() {
    try (Socket s = new Socket("127.0.0.1", port)) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    process.waitFor();
  }
}
