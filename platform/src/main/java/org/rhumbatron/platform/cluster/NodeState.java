package org.rhumbatron.platform.cluster;

import java.util.Locale;

/**
 * A node as the others see it: {@code live} while its heartbeat is younger than {@code
 * cluster.lease} on the database's clock, {@code stopped} after a clean stop, {@code lost} when its
 * heartbeat aged out without one.
 */
public enum NodeState {
  LIVE,
  STOPPED,
  LOST;

  public String dbName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
