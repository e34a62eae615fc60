package org.rhumbatron.app;

import io.nats.client.Connection;
import java.io.IOException;
import java.nio.file.Files;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.platform.natsserver.PrivateNatsServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Wires and runs core: NATS (own or private), the JetStream topology, and the HTTP server. */
final class CoreService implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(CoreService.class);

  private final CoreConfig config;
  private final PrivateNatsServer privateNats;
  private final Connection nats;
  private final HttpServer http;
  private final CountDownLatch closed = new CountDownLatch(1);
  private final AtomicBoolean closing = new AtomicBoolean();

  private CoreService(
      CoreConfig config, PrivateNatsServer privateNats, Connection nats, HttpServer http) {
    this.config = config;
    this.privateNats = privateNats;
    this.nats = nats;
    this.http = http;
  }

  static CoreService start(CoreConfig config) throws IOException, InterruptedException {
    Files.createDirectories(config.dataDir());
    PrivateNatsServer privateNats = null;
    String url = config.natsUrl();
    if (url == null) {
      privateNats = PrivateNatsServer.start(config.dataDir(), 0);
      url = privateNats.url();
    }
    Connection nats = null;
    HttpServer http = null;
    try {
      nats = JetStreamConnections.connect(url, "rhumbatron-core");
      new JetStreamTopology(nats.jetStreamManagement(), config.settings()).ensure();
      http = HttpServer.start(config.httpPort(), nats);
      CoreService service = new CoreService(config, privateNats, nats, http);
      log.info("core is up: nats {}, http port {}, data {}", url, http.port(), config.dataDir());
      return service;
    } catch (RuntimeException | IOException | InterruptedException e) {
      closeQuietly(http, nats, privateNats);
      throw e;
    }
  }

  int httpPort() {
    return http.port();
  }

  String natsUrl() {
    return nats.getConnectedUrl();
  }

  void awaitClose() throws InterruptedException {
    closed.await();
  }

  @Override
  public void close() {
    if (!closing.compareAndSet(false, true)) {
      return;
    }
    log.info("core is stopping");
    closeQuietly(http, nats, privateNats);
    log.info("core stopped");
    closed.countDown();
  }

  private static void closeQuietly(AutoCloseable... parts) {
    for (AutoCloseable part : parts) {
      if (part == null) {
        continue;
      }
      try {
        part.close();
      } catch (Exception e) {
        log.warn("while closing {}: {}", part.getClass().getSimpleName(), e.toString());
      }
    }
  }
}
