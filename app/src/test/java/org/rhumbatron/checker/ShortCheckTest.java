package org.rhumbatron.checker;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The short check of {@code .ci/run}: the workload on SQLite under every fault kind SQLite has, at
 * least once each, then the history checked. Every count that must be 0 is 0. Poison goes to the
 * queues and the workload's event streams only (see {@link CheckRun#poisonWorkloadStreamsOnly}).
 */
@Tag("short-check")
class ShortCheckTest {
  // With this seed every SQLite kind has run once 3 minutes in (faults end within --duration); the
  // last minute is room for restarts that run late, which would drop a kind.
  static final long SEED = 20279340L;
  static final Duration DURATION = Duration.ofMinutes(4);
  static final int POISON = 2_000;

  @Test
  void everyFaultKindOnSqliteLosesNothingDoublesNothingAndLeavesNothingOpen() throws Exception {
    // Under target/, not a temporary folder: a failed run's logs, store and database stay there.
    Path dir =
        Files.createTempDirectory(Files.createDirectories(Path.of("target")), "short-check-");
    CheckDatabase sqlite = CheckDatabase.of("sqlite");
    List<FaultPlan.Kind> kinds = CheckCommand.kinds(null, sqlite);
    assertThat(kinds)
        .doesNotContain(FaultPlan.Kind.DB_RESTART)
        .contains(FaultPlan.Kind.DISK_FULL, FaultPlan.Kind.LOST_TAIL);

    CheckReport report =
        new CheckRun(dir.resolve("run"), sqlite, SEED, DURATION, kinds, POISON, Clock.systemUTC())
            .poisonWorkloadStreamsOnly()
            .run();
    System.out.println(report.toTable());

    assertThat(report.dropped()).as("kinds dropped").isEmpty();
    assertThat(report.faults().keySet())
        .as("every fault kind injected at least once")
        .containsExactlyInAnyOrderElementsOf(kinds.stream().map(k -> k.wire).toList());
    assertThat(report.totals().get("events_committed")).as("a workload ran").isPositive();
    assertThat(report.totals().get("poison_sent")).as("all the poison went out").isEqualTo(POISON);
    assertThat(report.passed()).as(report.toTable() + "\nthe run is in " + dir).isTrue();
    deleteTree(dir);
  }

  static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
