package org.rhumbatron.app;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.rhumbatron.platform.config.Setting;
import org.rhumbatron.platform.config.Settings;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;

/**
 * {@code rhumbatron demo}: core with its embedded defaults (a SQLite file, a private nats-server, a
 * directory bucket) in a fresh data directory, a generated workload of Changes on overlapping
 * scopes run by the simulated Agents, verifier and release through approval, a progress line, and a
 * summary whose counts are the database's and the streams'.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description =
        "Run core on a generated workload (simulated Agents, verifier and releases), show"
            + " progress and print a summary.")
final class DemoCommand implements Callable<Integer> {
  static final int DEFAULT_CHANGES = 100;

  /**
   * The seed's settings but a shorter conflict review: the demo's Changes overlap on purpose, and a
   * Candidate that waits the full review stalls the demo for most of a minute. {@code --config} or
   * the environment can set it back.
   */
  static final Settings DEMO_DEFAULTS =
      Settings.defaults()
          .with(Settings.INTEGRATION_CONFLICT_REVIEW_DELAY, java.time.Duration.ofSeconds(5));

  @Option(
      names = "--changes",
      defaultValue = "" + DEFAULT_CHANGES,
      description = "Changes to create (20 Tasks each). Default: ${DEFAULT-VALUE}")
  int changes;

  @Option(
      names = "--duration",
      converter = DurationConverter.class,
      description =
          "Stop creating Changes after this long (30s, 5m); those created run to the end.")
  Duration duration;

  @Option(
      names = "--keep-running",
      description = "Keep core running after the summary, until Ctrl-C.")
  boolean keepRunning;

  @Option(
      names = "--data",
      description = "Data directory, new or empty. Default: a fresh temporary directory.")
  Path data;

  @Option(names = "--json", description = "Print the summary as one JSON object on stdout.")
  boolean json;

  @Option(
      names = "--http",
      defaultValue = "0",
      description =
          "HTTP port of core and its dashboard (0 = any free port). Default: ${DEFAULT-VALUE}")
  int http;

  @Option(
      names = "--nats",
      description = "NATS URL(s), comma separated. Without it a private nats-server is started.")
  String nats;

  @Option(
      names = "--config",
      description = "Settings file (Java properties); RHUMBATRON_<KEY> variables override it.")
  Path config;

  @Override
  public Integer call() throws Exception {
    if (changes < 1) {
      throw new IllegalArgumentException("--changes must be 1 or more, got " + changes);
    }
    Path dir = data != null ? data : Files.createTempDirectory("rhumbatron-demo-");
    DataDirLock.refuseIfHeld(dir); // a running core's directory is in use, not "used before"
    DemoRun.refuseUsedDataDir(dir);
    Files.createDirectories(dir);
    // The demo's workload needs NATS at once: a --nats that does not answer is an error.
    Settings settings =
        Settings.load(DEMO_DEFAULTS, config, System.getenv())
            .with(Settings.NATS_WAIT_AT_START, false);
    Clock clock = Clock.systemUTC();
    // Status lines go to stdout, unless stdout is for the JSON summary.
    PrintStream out = json ? System.err : System.out;
    AtomicReference<CoreService> running = new AtomicReference<>();
    CountDownLatch stopped = CoreCommand.closeOnExit(running);
    Path logFile = dir.resolve("core.log");
    try (DemoLog log = DemoLog.toFile(logFile)) {
      CoreService core =
          CoreService.start(
              new CoreConfig(nats, dir, null, http, settings),
              clock,
              org.rhumbatron.coordinator.outbox.StreamNudges.NONE,
              running::set);
      String dashboard = "http://127.0.0.1:" + core.httpPort() + "/";
      out.println("rhumbatron demo: data in " + dir + " (core's log: " + logFile + ")");
      out.println("rhumbatron demo: dashboard " + dashboard);
      DemoSummary summary;
      try {
        DemoRun run =
            new DemoRun(
                core, settings, dir, clock, changes, duration, DemoProgress.onStderr(clock));
        summary = run.run(dashboard);
      } catch (RuntimeException | Error e) {
        core.close();
        throw e;
      }
      if (json) {
        System.out.println(summary.toJson());
      } else {
        System.out.print(summary.toText());
      }
      System.out.flush();
      if (keepRunning) {
        out.println(
            "rhumbatron demo: core keeps running, dashboard " + dashboard + "; Ctrl-C stops it");
        core.awaitClose();
        stopped.await();
      } else {
        core.close();
      }
    }
    return 0;
  }

  /** {@code 30s}, {@code 5m}, {@code 500ms}, {@code 2h} or ISO-8601, as in the settings. */
  static final class DurationConverter implements ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      Duration d = Setting.parseDuration(value);
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException("a positive duration like 30s, 5m or PT30S");
      }
      return d;
    }
  }
}
