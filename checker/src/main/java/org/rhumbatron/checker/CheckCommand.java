package org.rhumbatron.checker;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.Callable;
import org.rhumbatron.workload.PositiveDuration;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code rhumbatron check}: the demo's workload against a core and a {@code nats-server} that the
 * check starts itself, a seeded schedule of faults, then the history checked. Exit 0 when every
 * count that must be 0 is 0, 1 when one is not (the report names the ids), 3 when the check failed
 * itself (no verdict; the report names the error and the seed).
 */
@Command(
    name = "check",
    mixinStandardHelpOptions = true,
    description =
        "Run the workload under a seeded schedule of faults, let it settle, then check the"
            + " history: events lost or doubled, effects doubled, Changes stuck, poison kept.",
    exitCodeListHeading = "Exit codes:%n",
    exitCodeList = {
      "0:every count that must be 0 is 0",
      "1:a count that must be 0 is not (violations found)",
      "2:bad usage",
      "3:the check failed itself (internal error, no verdict; repeat with its seed)"
    })
public final class CheckCommand implements Callable<Integer> {
  static final int PASSED = 0;
  static final int VIOLATIONS = 1;
  static final int INTERNAL_ERROR = 3;

  @Option(
      names = "--seed",
      description = "Seed of the schedule and the workload. Default: the current time.")
  Long seed;

  @Option(
      names = "--duration",
      defaultValue = "3m",
      converter = PositiveDuration.class,
      description =
          "How long faults are injected (30s, 5m, 30m): the whole fault phase. Each kind named"
              + " in --faults runs at least once: a duration too short for them is refused with"
              + " the shortest that fits; of the default kinds, those that do not fit are dropped"
              + " and named. Default: ${DEFAULT-VALUE}")
  Duration duration;

  @Option(
      names = "--faults",
      split = ",",
      description =
          "Fault kinds, comma separated. Default: every kind the database supports: "
              + "core-kill, core-kill-after-commit, nats-kill, nats-pause, lost-tail, link-cut,"
              + " link-stall, link-slow, nats-down-at-start, poison, and db-restart"
              + " (PostgreSQL) or disk-full (SQLite); node-kill, node-pause and node-stall (10"
              + " SIGSTOPs of 2 s, none of which may cost the core a duty) with --cores 2 or"
              + " more; nats-node-kill (and no lost-tail) with --nats-cluster 3 or 5.")
  List<String> faults;

  @Option(
      names = "--db",
      defaultValue = "sqlite",
      description =
          "sqlite (a file in --data), postgres (a private cluster made with initdb in --data),"
              + " or a jdbc: URL of a database of your own. Default: ${DEFAULT-VALUE}")
  String db;

  @Option(
      names = "--data",
      description = "Directory for the run, new or empty. Default: a fresh temporary one.")
  Path data;

  @Option(
      names = "--poison",
      defaultValue = "10000",
      description =
          "Hostile messages in all, spread over the poison faults. Default: ${DEFAULT-VALUE}")
  int poison;

  @Option(
      names = "--cores",
      defaultValue = "1",
      description =
          "Cores (nodes) sharing the database, each a process of its own; more than 1 needs"
              + " PostgreSQL and adds the faults node-kill, node-pause and node-stall. Default:"
              + " ${DEFAULT-VALUE}")
  int cores;

  @Option(
      names = "--nats-cluster",
      defaultValue = "1",
      description =
          "nats-servers: 1, or a cluster of 3 or 5 routed on loopback, with every stream and bucket"
              + " on each (streams.replicas); a cluster adds the fault nats-node-kill and drops"
              + " lost-tail. Default: ${DEFAULT-VALUE}")
  int natsCluster;

  @Option(names = "--json", description = "Print the result as JSON instead of a table.")
  boolean json;

  @Override
  public Integer call() throws Exception {
    Clock clock = Clock.systemUTC();
    long s = seed != null ? seed : clock.millis();
    if (poison < 0) {
      throw new IllegalArgumentException("--poison must be 0 or more, got " + poison);
    }
    CheckShape shape = new CheckShape(cores, natsCluster, CheckShape.DEFAULT_LEASE);
    CheckDatabase database = CheckDatabase.of(db);
    if (cores > 1 && database.oneNodeOnly()) {
      throw new IllegalArgumentException(
          "--cores " + cores + " needs PostgreSQL (--db postgres): SQLite is one node");
    }
    List<FaultPlan.Kind> kinds = kinds(faults, database, shape);
    List<Integer> streams = CheckWorkload.streams(CheckRun.runId(s));
    if (faults != null && !faults.isEmpty()) {
      String refusal = tooShort(kinds, duration, seed, streams, shape);
      if (refusal != null) {
        throw new IllegalArgumentException(refusal);
      }
    }
    // The options refused before anything is made on disk.
    Path dir = data != null ? data : Files.createTempDirectory("rhumbatron-check-");
    if (Files.isDirectory(dir)) {
      try (var entries = Files.list(dir)) {
        if (entries.findAny().isPresent()) {
          throw new IllegalArgumentException("--data " + dir + " is not empty");
        }
      }
    }
    List<FaultPlan.Kind> dropped = FaultPlan.plan(s, duration, kinds, streams, shape).dropped();
    System.err.println(
        "rhumbatron check: seed "
            + s
            + ", "
            + duration
            + ", faults "
            + FaultPlan.wires(kinds)
            + ", "
            + cores
            + " core(s), "
            + natsCluster
            + " nats-server(s), data in "
            + dir);
    if (!dropped.isEmpty()) {
      System.err.println(
          "rhumbatron check: "
              + FaultPlan.wires(dropped)
              + " do not fit in "
              + duration
              + " and are dropped; --duration "
              + seconds(FaultPlan.shortestFitting(s, kinds, streams, shape))
              + " fits every kind with this seed");
    }
    CheckReport report =
        new CheckRun(dir, database, s, duration, kinds, poison, clock).shape(shape).run();
    System.out.println(json ? report.toJson() : report.toTable());
    if (report.internalError() != null) {
      System.err.println(
          "rhumbatron check: internal error, no verdict: "
              + report.internalError()
              + "; its files are in "
              + dir);
    }
    System.err.println(
        "rhumbatron check: repeat with --seed "
            + s
            + " --duration "
            + duration
            + " --db "
            + db
            + " --cores "
            + cores
            + " --nats-cluster "
            + natsCluster);
    return exitCode(report);
  }

  /**
   * Why {@code kinds}, named by the user, do not all fit in {@code duration}, with the shortest
   * duration that fits them; null when they fit. With a {@code seed} its plan decides; without one
   * the run draws a seed, so the duration must fit any seed and the answer does not vary by run.
   */
  static String tooShort(
      List<FaultPlan.Kind> kinds,
      Duration duration,
      Long seed,
      List<Integer> streams,
      CheckShape shape) {
    if (seed != null) {
      List<FaultPlan.Kind> dropped =
          FaultPlan.plan(seed, duration, kinds, streams, shape).dropped();
      if (dropped.isEmpty()) {
        return null;
      }
      return "--faults "
          + FaultPlan.wires(dropped)
          + " do not fit in --duration "
          + seconds(duration)
          + " with --seed "
          + seed
          + "; the shortest --duration that fits every kind named is "
          + seconds(FaultPlan.shortestFitting(seed, kinds, streams, shape));
    }
    Duration fits = FaultPlan.shortestFittingAnySeed(kinds, shape);
    if (duration.compareTo(fits) >= 0) {
      return null;
    }
    return "--faults "
        + FaultPlan.wires(kinds)
        + " do not all fit in --duration "
        + seconds(duration)
        + " with every seed; the shortest --duration that fits every kind named with any seed is "
        + seconds(fits)
        + " (a --seed may fit a shorter one)";
  }

  private static String seconds(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
  }

  /** 0 passed, 1 violations found, 3 the check failed itself. */
  static int exitCode(CheckReport report) {
    if (report.internalError() != null) {
      return INTERNAL_ERROR;
    }
    return report.passed() ? PASSED : VIOLATIONS;
  }

  static List<FaultPlan.Kind> kinds(List<String> names, CheckDatabase database) {
    return kinds(names, database, CheckShape.SINGLE);
  }

  /**
   * The kinds named, or every kind the database and the shape support; one that does not fit is
   * refused.
   */
  static List<FaultPlan.Kind> kinds(List<String> names, CheckDatabase database, CheckShape shape) {
    if (names == null || names.isEmpty()) {
      List<FaultPlan.Kind> all = new ArrayList<>();
      for (FaultPlan.Kind k : FaultPlan.Kind.values()) {
        if (database.supports(k) && shape.supports(k)) {
          all.add(k);
        }
      }
      return all;
    }
    LinkedHashSet<FaultPlan.Kind> out = new LinkedHashSet<>();
    for (String name : names) {
      FaultPlan.Kind k = FaultPlan.Kind.fromWire(name.strip());
      if (!database.supports(k)) {
        throw new IllegalArgumentException(
            "fault " + k.wire + " does not apply to --db " + database.describe());
      }
      if (!shape.supports(k)) {
        throw new IllegalArgumentException(
            "fault "
                + k.wire
                + " does not apply to --cores "
                + shape.cores()
                + " --nats-cluster "
                + shape.natsServers());
      }
      out.add(k);
    }
    return List.copyOf(out);
  }
}
