package org.rhumbatron.server;

import java.nio.file.Path;
import java.util.Objects;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.jetstream.NatsUrls;

/**
 * What core needs to start: where NATS is (null = start a private one), the data directory, the
 * database (null = a SQLite file in the data directory), the HTTP port and the settings.
 */
public record CoreConfig(
    String natsUrl, Path dataDir, String database, int httpPort, Settings settings) {
  public CoreConfig {
    Objects.requireNonNull(dataDir, "dataDir");
    Objects.requireNonNull(settings, "settings");
    if (httpPort < 0 || httpPort > 65535) {
      throw new IllegalArgumentException("--http must be a port in 0..65535, got " + httpPort);
    }
    if (natsUrl != null) {
      checkNatsUrls(natsUrl);
    }
  }

  /** Each of the comma separated URLs is nats://HOST:PORT (or tls, ws, wss) or HOST:PORT. */
  static void checkNatsUrls(String urls) {
    try {
      NatsUrls.parse(urls);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--nats " + e.getMessage(), e);
    }
  }

  String databaseUrl() {
    return database != null ? database : dataDir.resolve("rhumbatron.db").toString();
  }
}
