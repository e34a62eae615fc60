package org.rhumbatron.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.rhumbatron.platform.natsserver.PrivateNatsServer;
import org.rhumbatron.workload.LifecycleWorkload;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** The picocli mixins that the {@code bench} subcommands share, and their usage errors. */
final class BenchOptions {
  private BenchOptions() {}

  /** Options every benchmark shares. */
  static final class Common {
    @Option(names = "--nats", description = "NATS URL; without it a private nats-server runs.")
    String nats;

    @Option(names = "--data", defaultValue = "data/bench", description = "Data directory.")
    Path data;

    @Option(names = "--db", description = "Database URL (default: a fresh SQLite file in --data).")
    String db;

    /** What one benchmark runs, given the NATS URL and the database URL; returns its JSON. */
    @FunctionalInterface
    interface Bench {
      String run(String natsUrl, String dbUrl) throws Exception;
    }

    /** Whether the nats-server is the bench's own (no {@code --nats}). */
    boolean ownServer() {
      return nats == null;
    }

    /**
     * Runs {@code bench} against {@code --nats}, or a private nats-server under {@code --data},
     * with {@code --db} or a fresh SQLite file {@code bench-<name>-<pid>.db}, and prints its JSON.
     */
    int run(String name, Bench bench) throws Exception {
      Files.createDirectories(data);
      PrivateNatsServer server = null;
      String url = nats;
      if (url == null) {
        server = PrivateNatsServer.start(data, 0);
        url = server.url();
      }
      try {
        String dbUrl =
            db != null
                ? db
                : data.resolve("bench-" + name + "-" + ProcessHandle.current().pid() + ".db")
                    .toString();
        System.out.println(bench.run(url, dbUrl));
        return 0;
      } finally {
        if (server != null) {
          server.close();
        }
      }
    }
  }

  /** The options of a benchmark that always runs its own nats-server: no {@code --nats}. */
  static final class OwnServer {
    @Option(names = "--data", defaultValue = "data/bench", description = "Data directory.")
    Path data;

    @Option(names = "--db", description = "Database URL (default: a fresh SQLite file in --data).")
    String db;

    int run(String name, Common.Bench bench) throws Exception {
      Common common = new Common();
      common.data = data;
      common.db = db;
      return common.run(name, bench);
    }
  }

  /** Measured rounds whose medians are the figures. */
  static final class Rounds {
    @Option(
        names = "--rounds",
        defaultValue = "3",
        description = "Measured rounds, after any warm-up; the figures are their medians.")
    int rounds;

    int checked(Object command) {
      require(command, rounds >= 1, "--rounds must be at least 1, was " + rounds);
      return rounds;
    }
  }

  /** How long the measured path runs before the rounds. */
  static final class Warmup {
    @Option(
        names = "--warmup-seconds",
        defaultValue = "10",
        description =
            "The measured path runs for at least this long (and at least once) before the"
                + " rounds, so that the JIT has compiled it.")
    int warmupSeconds;

    Duration checked(Object command) {
      require(
          command,
          warmupSeconds >= 0,
          "--warmup-seconds must not be negative, was " + warmupSeconds);
      return Duration.ofSeconds(warmupSeconds);
    }
  }

  /** The length of a latency phase. */
  static final class Latency {
    @Option(names = "--latency-seconds", defaultValue = "5", description = "Latency phase length.")
    int latencySeconds;
  }

  /** {@code shared} or {@code disjoint}; anything else is refused naming both. */
  static final class ScopesConverter
      implements CommandLine.ITypeConverter<LifecycleWorkload.Scopes> {
    @Override
    public LifecycleWorkload.Scopes convert(String value) {
      for (LifecycleWorkload.Scopes s : LifecycleWorkload.Scopes.values()) {
        if (s.name().equalsIgnoreCase(value)) {
          return s;
        }
      }
      throw new CommandLine.TypeConversionException(
          "'" + value + "' is not one of shared, disjoint");
    }
  }

  /** A usage error of {@code command} (picocli prints it with the usage) unless {@code ok}. */
  static void require(Object command, boolean ok, String message) {
    if (!ok) {
      throw new CommandLine.ParameterException(new CommandLine(command), message);
    }
  }
}
