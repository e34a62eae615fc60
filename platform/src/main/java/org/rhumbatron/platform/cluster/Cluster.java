package org.rhumbatron.platform.cluster;

import java.time.Clock;
import java.util.UUID;
import java.util.function.Supplier;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.SqliteDialect;

/** Makes the ownership that fits the database. */
public final class Cluster {
  private Cluster() {}

  /**
   * SQLite is one node: it owns every duty. PostgreSQL may have several: leases with epochs. {@code
   * address} is the node's HTTP address once known (null before).
   */
  public static DutyOwnership ownership(
      Database database, Settings settings, Clock clock, Supplier<String> address) {
    return ownership(database, nodeId(settings), settings, clock, address);
  }

  /** {@link #ownership} as the node {@code nodeId}. */
  public static DutyOwnership ownership(
      Database database, String nodeId, Settings settings, Clock clock, Supplier<String> address) {
    if (database.dialect() instanceof SqliteDialect) {
      return new OwnsEverything(nodeId, clock.instant());
    }
    return new LeasedOwnership(
        database,
        nodeId,
        address,
        settings.get(Settings.CLUSTER_HEARTBEAT),
        settings.get(Settings.CLUSTER_LEASE),
        settings.get(Settings.CLUSTER_POLL),
        clock);
  }

  /** {@code cluster.node-id}, or a fresh one: two runs never share an id by accident. */
  public static String nodeId(Settings settings) {
    String configured = settings.get(Settings.CLUSTER_NODE_ID);
    return configured.isEmpty()
        ? "node-" + UUID.randomUUID().toString().substring(0, 8)
        : configured;
  }
}
