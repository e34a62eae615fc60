package org.rhumbatron.app;

import java.nio.file.Path;
import java.util.Map;
import org.rhumbatron.platform.config.Settings;
import picocli.CommandLine.Option;

/** The options that every command which runs core shares (core, demo, bench). */
final class CoreOptions {
  @Option(
      names = "--nats",
      description = "NATS URL(s), comma separated. Without it a private nats-server is started.")
  String nats;

  @Option(
      names = "--data",
      defaultValue = "data",
      description =
          "Data directory (SQLite file, private nats-server store). Default: ${DEFAULT-VALUE}")
  Path data;

  @Option(
      names = "--http",
      defaultValue = "8080",
      description =
          "HTTP port for /healthz and the API (0 = any free port). Default: ${DEFAULT-VALUE}")
  int http;

  @Option(
      names = "--db",
      description =
          "Database: a SQLite file path or jdbc:sqlite:PATH, or jdbc:postgresql://HOST/DB."
              + " Default: DIR/rhumbatron.db")
  String db;

  @Option(
      names = "--config",
      description = "Settings file (Java properties); RHUMBATRON_<KEY> variables override it.")
  Path config;

  CoreConfig toConfig() {
    Settings settings = Settings.load(config, System.getenv());
    return new CoreConfig(nats, data, db, http, settings);
  }

  /** For tests that build a config without a command line. */
  static CoreConfig config(String nats, Path data, int http, Map<String, String> overrides) {
    return new CoreConfig(nats, data, null, http, Settings.defaults().with(overrides));
  }
}
