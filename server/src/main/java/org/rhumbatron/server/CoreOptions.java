package org.rhumbatron.server;

import java.nio.file.Path;
import java.util.Map;
import org.rhumbatron.platform.config.Settings;
import picocli.CommandLine.Option;

/** The options that every command which runs core shares (core, demo, bench). */
final class CoreOptions {
  @Option(
      names = "--nats",
      description =
          "NATS URL, or a cluster's URLs comma separated (setting nats.url). Without either a"
              + " private nats-server is started.")
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
    return new CoreConfig(natsUrl(nats, settings), data, db, http, settings);
  }

  /** {@code --nats} when given, else the setting {@code nats.url}, else none (a private server). */
  static String natsUrl(String option, Settings settings) {
    if (option != null) {
      return option;
    }
    String setting = settings.get(Settings.NATS_URL);
    return setting.isEmpty() ? null : setting;
  }

  /** For tests that build a config without a command line. */
  static CoreConfig config(String nats, Path data, int http, Map<String, String> overrides) {
    return new CoreConfig(nats, data, null, http, Settings.defaults().with(overrides));
  }
}
