package org.rhumbatron.app;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Set;
import org.rhumbatron.platform.config.Settings;

/**
 * What core needs to start: where NATS is (null = start a private one), the data directory, the
 * database (null = a SQLite file in the data directory), the HTTP port and the settings.
 */
record CoreConfig(String natsUrl, Path dataDir, String database, int httpPort, Settings settings) {
  CoreConfig {
    Objects.requireNonNull(dataDir, "dataDir");
    Objects.requireNonNull(settings, "settings");
    if (httpPort < 0 || httpPort > 65535) {
      throw new IllegalArgumentException("--http must be a port in 0..65535, got " + httpPort);
    }
    if (natsUrl != null) {
      checkNatsUrls(natsUrl);
    }
  }

  private static final Set<String> NATS_SCHEMES = Set.of("nats", "tls", "opentls", "ws", "wss");

  /** Each of the comma separated URLs is nats://HOST:PORT (or tls, ws, wss) or HOST:PORT. */
  static void checkNatsUrls(String urls) {
    for (String url : urls.split(",", -1)) {
      String u = url.strip();
      boolean ok;
      if (u.contains("://")) {
        try {
          URI uri = new URI(u);
          ok = NATS_SCHEMES.contains(uri.getScheme()) && uri.getHost() != null;
        } catch (URISyntaxException e) {
          ok = false;
        }
      } else {
        ok = u.matches("[A-Za-z0-9.\\-]+(:\\d+)?");
      }
      if (!ok) {
        throw new IllegalArgumentException(
            "--nats '"
                + u
                + "': not a NATS URL; write nats://HOST:PORT (tls://, ws:// and wss:// too),"
                + " several comma separated");
      }
    }
  }

  String databaseUrl() {
    return database != null ? database : dataDir.resolve("rhumbatron.db").toString();
  }
}
