package org.rhumbatron.platform.cluster;

import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.rhumbatron.platform.db.Tx;

/** The rows of {@code cluster_nodes} and {@code cluster_leases}: the heartbeat and the reads. */
final class ClusterRows {
  /** A lease as read: its holder, its epoch, and whether it expired on the database's clock. */
  record LeaseRow(String owner, long epoch, boolean expired) {}

  /** The live nodes (a heartbeat within the lease) and every duty's lease. */
  record Snapshot(List<String> live, Map<Duty, LeaseRow> leases) {}

  /** A duty's key as stored, with what goes with it in one read. */
  private record Keyed<T>(String dutyKey, T value) {}

  // A takeover or renewal waits at most this long for the fenced writes in flight.
  static final String LOCK_WAIT = "2s";

  // A node row without a heartbeat for this long is deleted (it stays visible as lost till then).
  private static final Duration FORGET_NODES_AFTER = Duration.ofHours(1);

  private ClusterRows() {}

  /**
   * The heartbeat of {@code nodeId} and the renewal of every lease it holds ({@code renewed}: the
   * duties and their epochs); forgets nodes silent for {@link #FORGET_NODES_AFTER}.
   */
  static void beatAndRenew(
      Tx tx, String nodeId, String address, Duration lease, Map<Duty, Long> renewed)
      throws SQLException {
    tx.queryFirst("SELECT set_config('lock_timeout', ?, true)", rs -> 1, LOCK_WAIT);
    int beats =
        tx.update(
            "UPDATE cluster_nodes SET last_heartbeat = now(), address = ?, state = ?"
                + " WHERE node_id = ?",
            address,
            NodeState.LIVE.column(),
            nodeId);
    if (beats == 0) {
      tx.update(
          "INSERT INTO cluster_nodes (node_id, address, started_at, last_heartbeat, state)"
              + " VALUES (?, ?, now(), now(), ?)",
          nodeId,
          address,
          NodeState.LIVE.column());
    }
    for (Keyed<Long> r :
        tx.query(
            "UPDATE cluster_leases SET expires_at = now() + ? * interval '1 millisecond'"
                + " WHERE owner_node = ? RETURNING duty, epoch",
            rs -> new Keyed<>(rs.getString(1), rs.getLong(2)),
            (double) lease.toMillis(),
            nodeId)) {
      renewed.put(Duty.ofKey(r.dutyKey()), r.value());
    }
    tx.update(
        "DELETE FROM cluster_nodes WHERE last_heartbeat < now() - ? * interval '1 millisecond'",
        (double) FORGET_NODES_AFTER.toMillis());
  }

  static Snapshot snapshot(Tx tx, Duration lease) throws SQLException {
    List<String> live =
        tx.query(
            "SELECT node_id FROM cluster_nodes WHERE state = ?"
                + " AND last_heartbeat > now() - ? * interval '1 millisecond'",
            rs -> rs.getString(1),
            NodeState.LIVE.column(),
            (double) lease.toMillis());
    Map<Duty, LeaseRow> leases = new EnumMap<>(Duty.class);
    for (Keyed<LeaseRow> r :
        tx.query(
            "SELECT duty, owner_node, epoch, expires_at < now() FROM cluster_leases",
            rs ->
                new Keyed<>(
                    rs.getString(1),
                    new LeaseRow(rs.getString(2), rs.getLong(3), rs.getBoolean(4))))) {
      try {
        leases.put(Duty.ofKey(r.dutyKey()), r.value());
      } catch (IllegalArgumentException unknown) {
        // A duty of a newer version of core: not this node's to take.
      }
    }
    return new Snapshot(live, leases);
  }

  /** The nodes and leases as {@code nodeId} sees them, for the API and the dashboard. */
  static ClusterView view(Tx tx, String nodeId, Duration lease) throws SQLException {
    List<ClusterView.Node> nodes =
        tx.query(
            "SELECT node_id, address, (extract(epoch FROM started_at) * 1000)::bigint,"
                + " (extract(epoch FROM last_heartbeat) * 1000)::bigint,"
                + " CASE WHEN state = ? THEN ?"
                + " WHEN last_heartbeat > now() - ? * interval '1 millisecond' THEN ?"
                + " ELSE ? END FROM cluster_nodes ORDER BY node_id",
            rs ->
                new ClusterView.Node(
                    rs.getString(1),
                    rs.getString(2),
                    Instant.ofEpochMilli(rs.getLong(3)),
                    Instant.ofEpochMilli(rs.getLong(4)),
                    NodeState.valueOf(rs.getString(5))),
            NodeState.STOPPED.column(),
            NodeState.STOPPED.name(),
            (double) lease.toMillis(),
            NodeState.LIVE.name(),
            NodeState.LOST.name());
    List<ClusterView.Lease> leases =
        tx.query(
            "SELECT duty, owner_node, epoch, (extract(epoch FROM expires_at) * 1000)::bigint"
                + " FROM cluster_leases ORDER BY duty",
            rs ->
                new ClusterView.Lease(
                    Duty.ofKey(rs.getString(1)),
                    rs.getString(2),
                    rs.getLong(3),
                    Instant.ofEpochMilli(rs.getLong(4))));
    return new ClusterView(nodeId, nodes, leases);
  }
}
