package org.rhumbatron.app.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The short check of {@code .ci/run}: the workload on SQLite under every fault kind SQLite has, at
 * least once each, then the history checked. Every count that must be 0 is 0. Poison goes to the
 * queues and the workload's event streams only (see {@link CheckRun#poisonWorkloadStreamsOnly}).
 */
class ShortCheckTest {
  static final long SEED = 20261205L;
  static final Duration DURATION = Duration.ofMinutes(2);
  static final int POISON = 2_000;

  @TempDir Path dir;

  @Test
  void everyFaultKindOnSqliteLosesNothingDoublesNothingAndLeavesNothingOpen() throws Exception {
    CheckDatabase sqlite = CheckDatabase.of("sqlite");
    List<FaultPlan.Kind> kinds = CheckCommand.kinds(null, sqlite);
    assertThat(kinds).doesNotContain(FaultPlan.Kind.DB_RESTART).contains(FaultPlan.Kind.DISK_FULL);

    CheckReport report =
        new CheckRun(dir.resolve("run"), sqlite, SEED, DURATION, kinds, POISON, Clock.systemUTC())
            .poisonWorkloadStreamsOnly()
            .run();
    System.out.println(report.toTable());

    assertThat(report.faults().keySet())
        .as("every fault kind injected at least once")
        .containsExactlyInAnyOrderElementsOf(kinds.stream().map(k -> k.wire).toList());
    assertThat(report.totals().get("events_committed")).as("a workload ran").isPositive();
    assertThat(report.passed()).as(report.toTable()).isTrue();
  }
}
