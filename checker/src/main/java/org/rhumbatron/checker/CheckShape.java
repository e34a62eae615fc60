package org.rhumbatron.checker;

import java.time.Duration;
import org.rhumbatron.platform.config.Settings;

/**
 * How many cores and {@code nats-server}s a check runs, and the cores' {@code cluster.lease}: which
 * fault kinds apply follows from it. Several cores need PostgreSQL (SQLite is one node).
 */
record CheckShape(int cores, int natsServers, Duration lease) {
  // The cores' own defaults: a check measures the failover a user gets.
  static final Duration DEFAULT_LEASE = Settings.defaults().get(Settings.CLUSTER_LEASE);
  private static final Duration DEFAULT_HEARTBEAT =
      Settings.defaults().get(Settings.CLUSTER_HEARTBEAT);
  static final CheckShape SINGLE = new CheckShape(1, 1, DEFAULT_LEASE);
  static final int MAX_CORES = 9;

  CheckShape {
    if (cores < 1 || cores > MAX_CORES) {
      throw new IllegalArgumentException("--cores must be 1 to " + MAX_CORES + ", got " + cores);
    }
    if (natsServers != 1 && natsServers != 3 && natsServers != 5) {
      throw new IllegalArgumentException(
          "--nats-cluster must be 1, 3 or 5 (a JetStream cluster needs a majority), got "
              + natsServers);
    }
    if (lease.isNegative() || lease.isZero()) {
      throw new IllegalArgumentException("the cores' lease must be positive, got " + lease);
    }
  }

  /** Whether {@code kind} has something to break in this shape. */
  boolean supports(FaultPlan.Kind kind) {
    return switch (kind) {
      case NODE_KILL, NODE_PAUSE, NODE_STALL -> cores > 1;
      case NATS_NODE_KILL -> natsServers > 1;
      // One server's cut store is healed from the other replicas in a cluster.
      case LOST_TAIL -> natsServers == 1;
      default -> true;
    };
  }

  /** Copies of each stream and bucket: every server holds one, up to JetStream's 5. */
  int replicas() {
    return natsServers;
  }

  /** The settings that go with the shape, as lines of core's properties file. */
  String settings() {
    StringBuilder out = new StringBuilder();
    if (natsServers > 1) {
      out.append("streams.replicas=").append(replicas()).append('\n');
    }
    if (cores > 1) {
      // Any core may archive an Event: the archive lives where all of them reach it.
      out.append("bucket.store=nats\n");
      out.append("cluster.lease=").append(lease.toMillis()).append("ms\n");
      Duration heartbeat = lease.equals(DEFAULT_LEASE) ? DEFAULT_HEARTBEAT : lease.dividedBy(3);
      out.append("cluster.heartbeat=").append(heartbeat.toMillis()).append("ms\n");
    }
    return out.toString();
  }
}
