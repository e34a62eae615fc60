package org.rhumbatron.platform.cluster;

import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.rhumbatron.platform.db.Tx;

/** The rows of {@code cluster_nodes} and {@code cluster_leases}: the heartbeat and the reads. */
final class ClusterRows {
  /** A lease as read: its holder, its epoch, and whether it expired on the database's clock. */
  record LeaseRow(String owner, long epoch, boolean expired) {}

  /**
   * The live nodes (a heartbeat within the lease, and their liveness lock held when they have one),
   * the gone ones (a liveness key whose lock nobody holds: the process died), and every duty's
   * lease.
   */
  record Snapshot(List<String> live, Set<String> gone, Map<Duty, LeaseRow> leases) {}

  /**
   * Whether the session-level advisory lock {@code keyColumn} is held in this database (an advisory
   * lock on a bigint key shows its high half as classid and its low half as objid).
   */
  static String livenessHeld(String keyColumn) {
    return "EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted"
        + " AND l.objsubid = 1"
        + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        + " AND ((l.classid::bigint << 32) | l.objid::bigint) = "
        + keyColumn
        + ")";
  }

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
      Tx tx,
      String nodeId,
      String address,
      long livenessKey,
      Duration lease,
      Map<Duty, Long> renewed)
      throws SQLException {
    tx.queryFirst("SELECT set_config('lock_timeout', ?, true)", rs -> 1, LOCK_WAIT);
    int beats =
        tx.update(
            "UPDATE cluster_nodes SET last_heartbeat = now(), address = ?, state = ?,"
                + " liveness_key = ? WHERE node_id = ?",
            address,
            NodeState.LIVE.dbName(),
            livenessKey,
            nodeId);
    if (beats == 0) {
      join(tx, nodeId, address, livenessKey);
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

  /** Writes (or rewrites, for an earlier run of the same id) the heartbeat row of a node. */
  static void join(Tx tx, String nodeId, String address, long livenessKey) throws SQLException {
    tx.update(
        "INSERT INTO cluster_nodes (node_id, address, started_at, last_heartbeat, state,"
            + " liveness_key) VALUES (?, ?, now(), now(), ?, ?) ON CONFLICT (node_id) DO UPDATE"
            + " SET address = excluded.address, started_at = now(), last_heartbeat = now(),"
            + " state = excluded.state, liveness_key = excluded.liveness_key",
        nodeId,
        address,
        NodeState.LIVE.dbName(),
        livenessKey);
  }

  /** A node row as the snapshot reads it. */
  private record NodeRow(String nodeId, boolean fresh, boolean gone) {}

  /**
   * Takes {@code duty} for {@code nodeId} if it is still at {@code seenEpoch} and free, expired,
   * its own, or held by a node whose liveness lock is free; returns the new epoch.
   */
  static Optional<Long> take(Tx tx, Duty duty, String nodeId, long seenEpoch, Duration lease)
      throws SQLException {
    tx.queryFirst("SELECT set_config('lock_timeout', ?, true)", rs -> 1, LOCK_WAIT);
    // FOR UPDATE, the one lock that conflicts with the fence's FOR KEY SHARE: the new epoch
    // commits only after every fenced write under the old one has ended.
    tx.queryFirst(
        "SELECT epoch FROM cluster_leases WHERE duty = ? FOR UPDATE",
        rs -> rs.getLong(1),
        duty.key());
    return tx.queryFirst(
        "UPDATE cluster_leases SET owner_node = ?, epoch = epoch + 1,"
            + " expires_at = now() + ? * interval '1 millisecond', taken_at = now()"
            + " WHERE duty = ? AND epoch = ?"
            + " AND (owner_node IS NULL OR owner_node = ? OR expires_at < now()"
            + " OR owner_node IN (SELECT node_id FROM cluster_nodes"
            + " WHERE liveness_key IS NOT NULL AND NOT "
            + livenessHeld("liveness_key")
            + ")) RETURNING epoch",
        rs -> rs.getLong(1),
        nodeId,
        (double) lease.toMillis(),
        duty.key(),
        seenEpoch,
        nodeId);
  }

  static Snapshot snapshot(Tx tx, Duration lease) throws SQLException {
    List<String> live = new ArrayList<>();
    Set<String> gone = new HashSet<>();
    for (NodeRow n :
        tx.query(
            "SELECT node_id, last_heartbeat > now() - ? * interval '1 millisecond',"
                + " liveness_key IS NOT NULL AND NOT "
                + livenessHeld("liveness_key")
                + " FROM cluster_nodes WHERE state = ?",
            rs -> new NodeRow(rs.getString(1), rs.getBoolean(2), rs.getBoolean(3)),
            (double) lease.toMillis(),
            NodeState.LIVE.dbName())) {
      if (n.gone()) {
        gone.add(n.nodeId());
      } else if (n.fresh()) {
        live.add(n.nodeId());
      }
    }
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
    return new Snapshot(live, gone, leases);
  }

  /** The nodes and leases as {@code nodeId} sees them, for the API and the dashboard. */
  static ClusterView view(Tx tx, String nodeId, Duration lease) throws SQLException {
    List<ClusterView.Node> nodes =
        tx.query(
            "SELECT node_id, address, (extract(epoch FROM started_at) * 1000)::bigint,"
                + " (extract(epoch FROM last_heartbeat) * 1000)::bigint,"
                + " CASE WHEN state = ? THEN ?"
                + " WHEN last_heartbeat > now() - ? * interval '1 millisecond'"
                + " AND (liveness_key IS NULL OR "
                + livenessHeld("liveness_key")
                + ") THEN ?"
                + " ELSE ? END FROM cluster_nodes ORDER BY node_id",
            rs ->
                new ClusterView.Node(
                    rs.getString(1),
                    rs.getString(2),
                    Instant.ofEpochMilli(rs.getLong(3)),
                    Instant.ofEpochMilli(rs.getLong(4)),
                    NodeState.valueOf(rs.getString(5))),
            NodeState.STOPPED.dbName(),
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
