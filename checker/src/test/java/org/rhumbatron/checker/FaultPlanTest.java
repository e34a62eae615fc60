package org.rhumbatron.checker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.protocol.EventStreams;

/**
 * The check's schedule: faults that hit a stream hit one the workload's Projects use; {@code
 * --duration} is the whole fault phase, kinds that do not fit named; and a check that fails itself
 * still ends with a report that says so, with its seed.
 */
class FaultPlanTest {
  /**
   * A seed whose plan once crashed the check: its lost-tail hit EVENTS_05, which no Project used.
   */
  static final long ISSUE_SEED = 1796566019734L;

  private static final List<FaultPlan.Kind> SQLITE_KINDS =
      CheckCommand.kinds(null, CheckDatabase.of("sqlite"));

  @Test
  void lostTailHitsOnlyStreamsOfTheWorkloadsProjects() {
    int lostTails = 0;
    for (long seed = ISSUE_SEED; seed < ISSUE_SEED + 20; seed++) {
      List<Integer> used = new ArrayList<>();
      for (String project : CheckWorkload.projectIds(CheckRun.runId(seed))) {
        used.add(EventStreams.streamIndex(project));
      }
      List<Integer> planned = CheckWorkload.streams(CheckRun.runId(seed));
      FaultPlan.Plan plan = FaultPlan.plan(seed, Duration.ofMinutes(30), SQLITE_KINDS, planned);
      for (FaultPlan.Fault f : plan.faults()) {
        if (f.kind() == FaultPlan.Kind.LOST_TAIL) {
          lostTails++;
          assertThat(used).as("seed %d: stream of %s", seed, f).contains(f.stream());
        }
      }
    }
    assertThat(lostTails).as("lost-tail faults planned").isGreaterThan(20);
  }

  @Test
  void theIssuesSeedUsesFewerThanAllStreams() {
    // Else the test above could not tell a used stream from any stream.
    assertThat(CheckWorkload.streams(CheckRun.runId(ISSUE_SEED)))
        .hasSizeLessThan(EventStreams.STREAM_COUNT)
        .doesNotContain(5);
  }

  @Test
  void everyFaultEndsWithinTheDurationAndEveryKindIsPlannedOrDropped() {
    for (Duration d :
        List.of(Duration.ofSeconds(30), Duration.ofMinutes(2), Duration.ofMinutes(5))) {
      FaultPlan.Plan plan = FaultPlan.plan(ISSUE_SEED, d, SQLITE_KINDS, CheckWorkload.streams("x"));
      List<FaultPlan.Kind> planned = new ArrayList<>();
      for (FaultPlan.Fault f : plan.faults()) {
        planned.add(f.kind());
        if (f.kind() != FaultPlan.Kind.NATS_DOWN_AT_START) {
          assertThat(f.atMillis() + f.lastsMillis())
              .as("%s ends within %s", f, d)
              .isLessThanOrEqualTo(d.toMillis());
        }
      }
      assertThat(plan.dropped())
          .as("a dropped kind is not planned")
          .doesNotContainAnyElementsOf(planned);
      List<FaultPlan.Kind> named = new ArrayList<>(planned);
      named.addAll(plan.dropped());
      assertThat(named).as("every kind asked for, at %s", d).containsAll(SQLITE_KINDS);
    }
  }

  @Test
  void thirtySecondsDropsKindsAndThirtyMinutesDropsNone() {
    assertThat(
            FaultPlan.plan(ISSUE_SEED, Duration.ofSeconds(30), SQLITE_KINDS, List.of(0)).dropped())
        .isNotEmpty();
    assertThat(
            FaultPlan.plan(ISSUE_SEED, Duration.ofMinutes(30), SQLITE_KINDS, List.of(0)).dropped())
        .isEmpty();
  }

  @Test
  void nodeFaultsNeedSeveralCoresAndANatsNodeKillACluster() {
    CheckDatabase postgres = CheckDatabase.of("postgres");
    assertThat(CheckCommand.kinds(null, postgres))
        .doesNotContain(
            FaultPlan.Kind.NODE_KILL, FaultPlan.Kind.NODE_PAUSE, FaultPlan.Kind.NATS_NODE_KILL);
    CheckShape cluster = new CheckShape(3, 3, Duration.ofSeconds(15));
    assertThat(CheckCommand.kinds(null, postgres, cluster))
        .contains(
            FaultPlan.Kind.NODE_KILL, FaultPlan.Kind.NODE_PAUSE, FaultPlan.Kind.NATS_NODE_KILL)
        .as("a cluster's other replicas keep a tail one server lost")
        .doesNotContain(FaultPlan.Kind.LOST_TAIL);
    assertThatThrownBy(() -> CheckCommand.kinds(List.of("node-kill"), postgres))
        .hasMessageContaining("node-kill")
        .hasMessageContaining("--cores 1");
    assertThatThrownBy(() -> new CheckShape(3, 2, Duration.ofSeconds(15)))
        .hasMessageContaining("--nats-cluster");
  }

  @Test
  void aNodeFaultHitsOneCoreOrServerAndOutlastsTheLease() {
    Duration lease = Duration.ofSeconds(15);
    CheckShape shape = new CheckShape(3, 3, lease);
    List<FaultPlan.Kind> kinds =
        List.of(FaultPlan.Kind.NODE_KILL, FaultPlan.Kind.NODE_PAUSE, FaultPlan.Kind.NATS_NODE_KILL);
    java.util.Set<Integer> cores = new java.util.HashSet<>();
    int nodeFaults = 0;
    for (long seed = ISSUE_SEED; seed < ISSUE_SEED + 10; seed++) {
      FaultPlan.Plan plan = FaultPlan.plan(seed, Duration.ofMinutes(30), kinds, List.of(0), shape);
      assertThat(plan.dropped()).isEmpty();
      for (FaultPlan.Fault f : plan.faults()) {
        assertThat(f.target()).as("%s", f).isBetween(0, 2);
        if (f.kind() != FaultPlan.Kind.NATS_NODE_KILL) {
          nodeFaults++;
          cores.add(f.target());
          assertThat(f.lastsMillis())
              .as("%s outlasts the lease", f)
              .isGreaterThan(lease.toMillis());
        }
      }
    }
    assertThat(nodeFaults).isGreaterThan(10);
    assertThat(cores).as("every core is hit some time").containsExactlyInAnyOrder(0, 1, 2);
  }

  /** The kinds of a shipped 3-node check that dropped node-kill and nats-node-kill in 3m. */
  private static final List<FaultPlan.Kind> NODE_KINDS =
      List.of(
          FaultPlan.Kind.NODE_KILL,
          FaultPlan.Kind.NODE_PAUSE,
          FaultPlan.Kind.NATS_NODE_KILL,
          FaultPlan.Kind.LINK_CUT,
          FaultPlan.Kind.POISON);

  private static final CheckShape THREE_NODES = new CheckShape(3, 3, Duration.ofSeconds(15));

  @Test
  void theShortestFittingDurationHoldsEveryKindAndASecondLessDoesNot() {
    List<Integer> streams = List.of(0);
    for (long seed = 1; seed <= 30; seed++) {
      Duration fits = FaultPlan.shortestFitting(seed, NODE_KINDS, streams, THREE_NODES);
      FaultPlan.Plan plan = FaultPlan.plan(seed, fits, NODE_KINDS, streams, THREE_NODES);
      assertThat(plan.dropped()).as("seed %d at %s", seed, fits).isEmpty();
      assertThat(plan.faults().stream().map(FaultPlan.Fault::kind))
          .as("seed %d: every kind runs", seed)
          .containsAll(NODE_KINDS);
      assertThat(
              FaultPlan.plan(seed, fits.minusSeconds(1), NODE_KINDS, streams, THREE_NODES)
                  .dropped())
          .as("seed %d: a second less drops a kind", seed)
          .isNotEmpty();
    }
  }

  @Test
  void theDurationForAnySeedHoldsTheLongestFaultsAndGaps() {
    // By hand: 10 s before the first fault, 4 gaps of at most 15 s, node-kill and node-pause up
    // to 2 * 15 + 15 s each, nats-node-kill up to 30 s, link-cut capped at a sixth of the run,
    // poison none: 190 + d / 6 <= d from d = 228 s.
    assertThat(FaultPlan.shortestFittingAnySeed(NODE_KINDS, THREE_NODES))
        .isEqualTo(Duration.ofSeconds(228));
    for (long seed = 0; seed < 200; seed++) {
      assertThat(
              FaultPlan.plan(seed, Duration.ofSeconds(228), NODE_KINDS, List.of(0), THREE_NODES)
                  .dropped())
          .as("seed %d", seed)
          .isEmpty();
    }
  }

  @Test
  void namedKindsThatDoNotFitAreRefusedAtStartInOneLine(@TempDir Path dir) throws Exception {
    // A --data in use: a check that missed the refusal stops there at once instead of running.
    java.nio.file.Files.writeString(dir.resolve("earlier-run"), "");
    // The command runs its cores on core's own lease.
    CheckShape commands = new CheckShape(3, 3, CheckShape.DEFAULT_LEASE);
    List<Integer> streams = CheckWorkload.streams(CheckRun.runId(5));
    long fits = FaultPlan.shortestFitting(5, NODE_KINDS, streams, commands).toSeconds();
    long tooShort = fits - 1;
    CheckCommand check = new CheckCommand();
    picocli.CommandLine.populateCommand(
        check,
        "--db",
        "postgres",
        "--cores",
        "3",
        "--nats-cluster",
        "3",
        "--duration",
        tooShort + "s",
        "--seed",
        "5",
        "--faults",
        "node-kill,node-pause,nats-node-kill,link-cut,poison",
        "--data",
        dir.toString());

    assertThatThrownBy(check::call)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageMatching(
            "--faults [a-z,-]+ do not fit in --duration "
                + tooShort
                + "s with --seed 5; the shortest --duration that fits every kind named is "
                + fits
                + "s")
        .hasMessageNotContaining("\n");
    try (var files = java.nio.file.Files.list(dir)) {
      assertThat(files.toList()).as("refused before anything started").hasSize(1);
    }
  }

  @Test
  void withoutASeedTheRefusalGivesTheDurationForAnySeed() {
    assertThat(
            CheckCommand.tooShort(
                NODE_KINDS, Duration.ofSeconds(227), null, List.of(0), THREE_NODES))
        .isEqualTo(
            "--faults node-kill,node-pause,nats-node-kill,link-cut,poison do not all fit in"
                + " --duration 227s with every seed; the shortest --duration that fits every kind"
                + " named with any seed is 228s (a --seed may fit a shorter one)");
    assertThat(
            CheckCommand.tooShort(
                NODE_KINDS, Duration.ofSeconds(228), null, List.of(0), THREE_NODES))
        .isNull();
    List<Integer> streams = CheckWorkload.streams(CheckRun.runId(5));
    Duration fits = FaultPlan.shortestFitting(5, NODE_KINDS, streams, THREE_NODES);
    assertThat(CheckCommand.tooShort(NODE_KINDS, fits, 5L, streams, THREE_NODES)).isNull();
  }

  @Test
  void aCheckThatFailsItselfEndsWithAReportNamingTheErrorAndTheSeed(@TempDir Path dir) {
    AtomicBoolean closed = new AtomicBoolean();
    CheckDatabase broken =
        new CheckDatabase() {
          @Override
          String start(Path d) {
            throw new IllegalStateException("initdb failed");
          }

          @Override
          FaultPlan.Kind outageKind() {
            return null;
          }

          @Override
          void outage(long millis) {}

          @Override
          String describe() {
            return "broken";
          }

          @Override
          public void close() {
            closed.set(true);
          }
        };

    CheckReport report =
        new CheckRun(
                dir, broken, ISSUE_SEED, Duration.ofSeconds(30), SQLITE_KINDS, 0, Clock.systemUTC())
            .run();

    assertThat(report.internalError()).contains("initdb failed");
    assertThat(report.seed()).isEqualTo(ISSUE_SEED);
    assertThat(report.passed()).isFalse();
    assertThat(CheckCommand.exitCode(report))
        .as("distinct from violations found")
        .isEqualTo(CheckCommand.INTERNAL_ERROR)
        .isNotEqualTo(CheckCommand.VIOLATIONS);
    assertThat(report.toTable()).contains("INTERNAL ERROR").contains("seed " + ISSUE_SEED);
    assertThat(report.toJson()).contains("\"seed\" : " + ISSUE_SEED).contains("initdb failed");
    assertThat(closed).as("the database closed as on a normal end").isTrue();
  }
}
