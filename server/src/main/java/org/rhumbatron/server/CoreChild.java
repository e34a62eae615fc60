package org.rhumbatron.server;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The command line of a core run as a child process of this JVM, on this JVM's class path. */
public final class CoreChild {
  /**
   * The launcher's main class, by name: it lives in app/, above this module, and the one jar (or a
   * test class path of app/) holds it wherever a core is started as a child.
   */
  public static final String LAUNCHER = "org.rhumbatron.app.Main";

  private CoreChild() {}

  /** {@code java -cp ... Main core ...}; {@code config} may be null. */
  public static List<String> command(
      String natsUrl, Path dataDir, String databaseUrl, int httpPort, Path config) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx1g");
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(LAUNCHER);
    command.addAll(
        List.of(
            "core",
            "--nats",
            natsUrl,
            "--data",
            dataDir.toString(),
            "--db",
            databaseUrl,
            "--http",
            Integer.toString(httpPort)));
    if (config != null) {
      command.addAll(List.of("--config", config.toString()));
    }
    return command;
  }
}
