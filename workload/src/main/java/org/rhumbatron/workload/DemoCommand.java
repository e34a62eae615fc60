package org.rhumbatron.workload;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLContext;
import org.rhumbatron.platform.bucket.BucketStore;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.tls.PemCa;
import org.rhumbatron.server.CoreCommand;
import org.rhumbatron.server.CoreConfig;
import org.rhumbatron.server.CoreService;
import org.rhumbatron.server.DataDirLock;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code rhumbatron demo}: core with its embedded defaults (a SQLite file, a private nats-server, a
 * directory bucket) in a fresh data directory, a generated workload of Changes on overlapping
 * scopes run by the simulated Agents, verifier and release through approval, a progress line, and a
 * summary whose counts are the database's and the streams'. It cleans up after itself: a temporary
 * data directory and a PostgreSQL database it made are gone at the end, unless core keeps running
 * (then the database goes when core stops).
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description =
        "Run core on a generated workload (simulated Agents, verifier and releases), show"
            + " progress and print a summary.")
public final class DemoCommand implements Callable<Integer> {
  static final int DEFAULT_CHANGES = 100;

  /** Random bytes of the demo's own API token (hex: twice as many characters). */
  static final int TOKEN_BYTES = 16;

  /** The summary's dashboard line when core stopped with the demo. */
  static final String DASHBOARD_GONE = "gone: core stopped with the demo (--keep-running keeps it)";

  /** How long the clean-up at exit waits for core to stop before it leaves things as they are. */
  static final Duration CLEANUP_WAITS_FOR_CORE = Duration.ofSeconds(30);

  /**
   * The seed's settings but a shorter conflict review: the demo's Changes overlap on purpose, and a
   * Candidate that waits the full review stalls the demo for most of a minute. {@code --config} or
   * the environment can set it back.
   */
  /** Where the demo reads its CA file from without {@code --cacert}, as the CLI does. */
  static final String CACERT_ENV = "RHUMBATRON_CACERT";

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
      converter = PositiveDuration.class,
      description =
          "Stop creating Changes after this long (30s, 5m); those created run to the end.")
  Duration duration;

  @Option(
      names = "--keep-running",
      description =
          "Keep core running after the summary, until Ctrl-C; prints the dashboard URL and the"
              + " API token.")
  boolean keepRunning;

  @Option(
      names = "--data",
      description =
          "Data directory, new or empty, kept at the end. Default: a fresh temporary directory,"
              + " deleted at the end unless --keep-running.")
  Path data;

  @Option(
      names = "--db",
      defaultValue = "sqlite",
      description =
          "sqlite (a file in the data directory), postgres (a fresh database on the local server"
              + " 127.0.0.1:5432, user postgres, dropped at the end), or a jdbc:sqlite: or"
              + " jdbc:postgresql: URL of a new or empty database. Default: ${DEFAULT-VALUE}")
  String db;

  @Option(
      names = "--cores",
      defaultValue = "1",
      description =
          "Cores (nodes) on the one database, needs --db postgres with more than 1: this process"
              + " runs one, the others are child processes; one of them is SIGKILLed when half"
              + " the Changes ended, and the summary says how long until its duties moved and its"
              + " in-flight work was handled, and whether every Change ended. Default:"
              + " ${DEFAULT-VALUE}")
  int cores;

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

  @Option(
      names = "--cacert",
      description =
          "PEM file of the CA that signed core's certificate when the settings turn TLS on"
              + " (http.tls.cert). Default: $RHUMBATRON_CACERT, else the system's trusted CAs.")
  Path cacert;

  @Override
  public Integer call() throws Exception {
    if (changes < 1) {
      throw new IllegalArgumentException("--changes must be 1 or more, got " + changes);
    }
    DemoDatabase.check(db);
    checkCores(cores, db);
    boolean temporary = data == null;
    Path dir = temporary ? Files.createTempDirectory("rhumbatron-demo-") : data;
    DataDirLock.refuseIfHeld(dir); // a running core's directory is in use, not "used before"
    DemoRun.refuseUsedDataDir(dir);
    Files.createDirectories(dir);
    // The demo's workload needs NATS at once: a --nats that does not answer is an error.
    Settings loaded =
        Settings.load(DEMO_DEFAULTS, config, System.getenv())
            .with(Settings.NATS_WAIT_AT_START, false);
    // A token of its own unless one is set, so the API's writes work (and say nothing at start).
    String token = loaded.get(Settings.API_TOKEN);
    boolean ownToken = token == null || token.isBlank();
    if (ownToken) {
      token = newToken();
    }
    Settings settings = loaded.with(Settings.API_TOKEN, token);
    if (cores > 1) {
      // Any core may archive an Event: the archive lives where all of them reach it.
      settings = settings.with(Settings.BUCKET_STORE, BucketStore.NATS);
    }
    Clock clock = Clock.systemUTC();
    // Status lines go to stdout, unless stdout is for the JSON summary.
    PrintStream out = json ? System.err : System.out;
    String database = "postgres".equals(db) ? DemoDatabase.create(clock) : null;
    String databaseUrl = database != null ? DemoDatabase.url(database) : DemoDatabase.given(db);
    AtomicReference<CoreService> running = new AtomicReference<>();
    CountDownLatch stopped = CoreCommand.closeOnExit(running);
    AtomicBoolean succeeded = new AtomicBoolean();
    Runnable cleanUp = DemoCleanUp.of(database, temporary && !keepRunning, succeeded, dir, out);
    DemoCleanUp.afterCoreStops(stopped, CLEANUP_WAITS_FOR_CORE, cleanUp);
    Path logFile = dir.resolve("core.log");
    try (DemoLog log = DemoLog.toFile(logFile)) {
      CoreService core;
      try {
        core =
            CoreService.start(
                new CoreConfig(nats, dir, databaseUrl, http, settings),
                clock,
                org.rhumbatron.coordinator.outbox.StreamNudges.NONE,
                running::set);
      } catch (RuntimeException | Error e) {
        cleanUp.run();
        throw e;
      }
      String dashboard = core.publicUrl() + "/";
      announce(out, dir, temporary && !keepRunning, logFile, database);
      out.println("rhumbatron demo: dashboard " + dashboard);
      DemoSummary summary;
      DemoCores others = null;
      try {
        DemoApi api = new DemoApi(core.publicUrl(), token, trust(cacert, System.getenv()));
        api.checkReachable();
        DemoRun run =
            new DemoRun(
                core, settings, dir, clock, changes, duration, DemoProgress.onStderr(clock), api);
        if (cores > 1) {
          others = startOthers(core, settings, dir, databaseUrl, clock, out);
          run.killHalfway(others);
        }
        // Without --keep-running core stops right after the summary: no link to a dead page.
        summary = run.run(keepRunning ? dashboard : null);
      } catch (Exception | Error e) {
        if (others != null) {
          others.close();
        }
        core.close();
        cleanUp.run();
        if (temporary) {
          out.println("rhumbatron demo: " + dir + " is kept for its log");
        }
        throw e;
      }
      if (json) {
        System.out.println(summary.toJson());
      } else {
        System.out.print(summary.toText());
      }
      System.out.flush();
      succeeded.set(true);
      if (keepRunning) {
        out.println(
            "rhumbatron demo: core keeps running, dashboard "
                + dashboard
                + ", API token "
                + (ownToken ? token : "of your settings")
                + "; Ctrl-C stops it");
        out.flush();
        core.awaitClose();
        stopped.await();
      }
      // The child cores stop first, so they hand their duties over to a core that still runs.
      if (others != null) {
        others.close();
      }
      if (!keepRunning) {
        core.close();
        core.awaitClose();
      }
    }
    cleanUp.run();
    return 0;
  }

  /** The CA of {@code --cacert} or {@code $RHUMBATRON_CACERT}; null: the system's. */
  static SSLContext trust(Path cacert, Map<String, String> env) throws IOException {
    String fromEnv = env.getOrDefault(CACERT_ENV, "").strip();
    Path pem = cacert != null ? cacert : fromEnv.isEmpty() ? null : Path.of(fromEnv);
    if (pem == null) {
      return null;
    }
    if (!Files.isReadable(pem)) {
      throw new IllegalArgumentException(
          (cacert != null ? "--cacert " : "$" + CACERT_ENV + " ") + pem + ": no readable file");
    }
    return PemCa.trusting(cacert != null ? "--cacert" : "$" + CACERT_ENV, pem);
  }

  /** Where the demo keeps its data, its log and its database. */
  private static void announce(
      PrintStream out, Path dir, boolean deleted, Path logFile, String database) {
    out.println(
        "rhumbatron demo: data in "
            + dir
            + (deleted ? ", deleted at the end (--data DIR keeps one)" : "")
            + " (core's log: "
            + logFile
            + ")");
    if (database != null) {
      out.println(
          "rhumbatron demo: database "
              + database
              + " on "
              + DemoDatabase.LOCAL_POSTGRES
              + ", dropped at the end");
    }
  }

  /** More than one core needs PostgreSQL: SQLite is one node. */
  static void checkCores(int cores, String spec) {
    if (cores < 1) {
      throw new IllegalArgumentException("--cores must be 1 or more, got " + cores);
    }
    if (cores > 1 && !spec.equals("postgres") && !spec.startsWith("jdbc:postgresql:")) {
      throw new IllegalArgumentException(
          "--cores "
              + cores
              + " needs --db postgres (or a jdbc:postgresql: URL): SQLite is one node");
    }
  }

  private DemoCores startOthers(
      CoreService core,
      Settings settings,
      Path dir,
      String databaseUrl,
      Clock clock,
      PrintStream out)
      throws IOException {
    Map<String, String> shared =
        Map.of(
            Settings.API_TOKEN.envName(),
            settings.get(Settings.API_TOKEN),
            Settings.BUCKET_STORE.envName(),
            "nats",
            Settings.INTEGRATION_CONFLICT_REVIEW_DELAY.envName(),
            settings.get(Settings.INTEGRATION_CONFLICT_REVIEW_DELAY).toMillis() + "ms");
    DemoCores others =
        DemoCores.start(cores - 1, dir, core.natsUrl(), databaseUrl, config, shared, clock);
    out.println(
        "rhumbatron demo: "
            + (cores - 1)
            + " more core(s) as child processes, logs in "
            + dir
            + "/core-K.log; one is SIGKILLed when half the Changes ended");
    return others;
  }

  static String newToken() {
    byte[] bytes = new byte[TOKEN_BYTES];
    new SecureRandom().nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }
}
