package org.rhumbatron.platform.cluster;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.rhumbatron.platform.db.Tx;

/**
 * The one node of a SQLite core (and of tests that run one core): it holds every duty at epoch 0
 * from {@link #start} on and its fence always passes, so nothing changes against one node.
 */
public final class OwnsEverything implements DutyOwnership {
  private final String nodeId;
  private final Instant startedAt;

  public OwnsEverything(String nodeId, Instant startedAt) {
    this.nodeId = nodeId;
    this.startedAt = startedAt;
  }

  /** For wiring that does not care about the node id (tests, one-node tools). */
  public static OwnsEverything single() {
    return new OwnsEverything("single", Instant.EPOCH);
  }

  @Override
  public String nodeId() {
    return nodeId;
  }

  @Override
  public boolean owns(Duty duty) {
    return true;
  }

  @Override
  public Optional<Long> epoch(Duty duty) {
    return Optional.of(0L);
  }

  @Override
  public long fence(Tx tx, Duty duty) {
    return 0;
  }

  @Override
  public void listen(DutyListener listener) {
    // Duties never change hands on one node.
  }

  /** Nothing to join: the node held every duty from the start, so no listener hears a change. */
  @Override
  public void start() {}

  @Override
  public ClusterView view() {
    List<ClusterView.Lease> leases = new ArrayList<>();
    for (Duty d : Duty.values()) {
      leases.add(new ClusterView.Lease(d, nodeId, 0, null));
    }
    return new ClusterView(
        nodeId,
        List.of(new ClusterView.Node(nodeId, null, startedAt, null, NodeState.LIVE)),
        leases);
  }

  @Override
  public long ownershipChanges() {
    return 0;
  }

  @Override
  public long fencedWrites() {
    return 0;
  }

  @Override
  public void close() {}
}
