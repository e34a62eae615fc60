package org.rhumbatron.app;

import java.nio.file.Path;
import java.util.Objects;
import org.rhumbatron.platform.config.Settings;

/** What core needs to start: where NATS is (null = start a private one), data dir, HTTP port. */
record CoreConfig(String natsUrl, Path dataDir, int httpPort, Settings settings) {
  CoreConfig {
    Objects.requireNonNull(dataDir, "dataDir");
    Objects.requireNonNull(settings, "settings");
    if (httpPort < 0 || httpPort > 65535) {
      throw new IllegalArgumentException("--http must be a port in 0..65535, got " + httpPort);
    }
  }
}
