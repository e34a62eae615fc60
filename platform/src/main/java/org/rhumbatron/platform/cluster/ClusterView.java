package org.rhumbatron.platform.cluster;

import java.time.Instant;
import java.util.List;

/** What {@code GET /api/cluster} shows: the nodes and who holds which duty at which epoch. */
public record ClusterView(String nodeId, List<Node> nodes, List<Lease> duties) {

  public ClusterView {
    nodes = List.copyOf(nodes);
    duties = List.copyOf(duties);
  }

  /** A node's heartbeat row; {@code address} may be null (not known yet). */
  public record Node(
      String nodeId, String address, Instant startedAt, Instant lastHeartbeat, NodeState state) {}

  /** A duty's lease; {@code owner} null when nobody holds it (released, never taken). */
  public record Lease(Duty duty, String owner, long epoch, Instant expiresAt) {}
}
