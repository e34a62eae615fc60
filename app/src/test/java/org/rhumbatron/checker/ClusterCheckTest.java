package org.rhumbatron.checker;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Failover under load, with the history checker: three cores on one private PostgreSQL and a
 * three-server NATS cluster; one core SIGKILLed, one paused past its lease and resumed, one
 * nats-server SIGKILLed. Every duty of a lost core is taken over, every Change ends, nothing is
 * lost or doubled, and no outbox row was recorded under an epoch older than one already used.
 *
 * <p>Not in {@code bin/test} (tag {@code long-check}): it takes minutes of faults on three cores,
 * more than the suite's lanes leave room for. Run it with {@code mvn -pl app surefire:test
 * -Dtest=ClusterCheckTest -Dcheck.long.excluded=none}.
 */
@Tag("long-check")
class ClusterCheckTest {
  static final long SEED = 20261206L;
  // Short leases so that a core's faults fit a short run; node faults outlast the lease.
  static final Duration LEASE = Duration.ofSeconds(5);
  static final Duration DURATION = Duration.ofSeconds(150);

  @Test
  void killedAndPausedCoresAndAKilledNatsServerLoseNothingAndDoubleNothing() throws Exception {
    Path dir =
        Files.createTempDirectory(Files.createDirectories(Path.of("target")), "cluster-check-");
    List<FaultPlan.Kind> kinds =
        List.of(FaultPlan.Kind.NODE_KILL, FaultPlan.Kind.NODE_PAUSE, FaultPlan.Kind.NATS_NODE_KILL);

    CheckReport report =
        new CheckRun(
                dir.resolve("run"),
                CheckDatabase.of("postgres"),
                SEED,
                DURATION,
                kinds,
                0,
                Clock.systemUTC())
            .shape(new CheckShape(3, 3, LEASE))
            .run();
    System.out.println(report.toTable());

    assertThat(report.internalError()).as("the check ran").isNull();
    assertThat(report.faults().keySet())
        .as("every fault kind injected at least once")
        .containsExactlyInAnyOrder("node-kill", "node-pause", "nats-node-kill");
    assertThat(report.totals()).containsKey("takeover_after_node_kill_ms.max");
    assertThat(report.totals().get("takeover_after_node_kill_ms.max"))
        .as("a killed core's duties move within the lease and a few polls")
        .isLessThan(LEASE.toMillis() + 5_000);
    assertThat(report.totals().get("changes")).as("a workload ran").isPositive();
    assertThat(report.totals().get("outbox_rows_epoch_checked")).isPositive();
    assertThat(report.passed()).as(report.toTable() + "\nthe run is in " + dir).isTrue();
    ShortCheckTest.deleteTree(dir);
  }
}
