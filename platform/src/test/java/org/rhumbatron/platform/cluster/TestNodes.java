package org.rhumbatron.platform.cluster;

import static org.awaitility.Awaitility.await;

import java.time.Clock;
import java.time.Duration;
import java.util.stream.IntStream;
import org.rhumbatron.platform.db.Database;

/**
 * Nodes of the several-core tests on one PostgreSQL database: their leases (short, so a takeover
 * after a pause comes within seconds; in real time, as leases expire on the database's clock) and
 * the wait until two nodes share the duties.
 */
public final class TestNodes {
  /** How long a paused node keeps its duties. */
  public static final Duration LEASE = Duration.ofSeconds(2);

  private static final Duration HEARTBEAT = Duration.ofMillis(400);
  private static final Duration POLL = Duration.ofMillis(200);

  private TestNodes() {}

  /** Node {@code id}'s ownership on {@code database}, not started. */
  public static LeasedOwnership ownership(Database database, String id) {
    return ownership(database, id, Clock.systemUTC());
  }

  /** Node {@code id}'s ownership on {@code clock} (a {@link FreezableClock} for a zombie). */
  public static LeasedOwnership ownership(Database database, String id, Clock clock) {
    return new LeasedOwnership(database, id, () -> null, HEARTBEAT, LEASE, POLL, clock);
  }

  /** Starts both nodes and waits until each holds some duties and together all, for a while. */
  public static void startSharing(DutyOwnership a, DutyOwnership b) {
    a.start();
    b.start();
    await()
        .atMost(Duration.ofSeconds(15))
        .during(Duration.ofMillis(800))
        .until(
            () ->
                heldCount(a) > 0
                    && heldCount(b) > 0
                    && heldCount(a) + heldCount(b) == Duty.values().length);
  }

  /** The first project id {@code <prefix>-<i>} whose stream {@code node} holds. */
  public static String projectHeldBy(DutyOwnership node, String prefix) {
    return IntStream.range(0, 1000)
        .mapToObj(i -> prefix + "-" + i)
        .filter(id -> node.owns(Duty.ofProject(id)))
        .findFirst()
        .orElseThrow();
  }

  private static int heldCount(DutyOwnership node) {
    int n = 0;
    for (Duty d : Duty.values()) {
      n += node.owns(d) ? 1 : 0;
    }
    return n;
  }
}
