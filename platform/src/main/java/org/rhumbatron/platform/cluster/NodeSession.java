package org.rhumbatron.platform.cluster;

import java.time.Clock;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.DatabaseException;
import org.rhumbatron.platform.db.DatabaseSession;
import org.rhumbatron.platform.db.TxWork;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's own PostgreSQL connection, outside the pool, holding the session-level advisory lock
 * that says the node's process lives ({@code cluster_nodes.liveness_key}); the server frees it when
 * the process dies. One thread at a time (the cluster loop).
 */
final class NodeSession implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(LeasedOwnership.class);

  private final Database database;
  private final String nodeId;
  private final long livenessKey;
  private final Clock clock;
  private DatabaseSession session;
  private boolean livenessHeld;
  private long warnedMs = Long.MIN_VALUE / 2;

  NodeSession(Database database, String nodeId, Clock clock) {
    this.database = database;
    this.nodeId = nodeId;
    this.livenessKey = livenessKey(nodeId);
    this.clock = clock;
  }

  /** The {@code application_name} of a node's database sessions. */
  static String applicationName(String nodeId) {
    return "rhumbatron/" + nodeId;
  }

  /** The advisory lock key a node holds while it lives: FNV-1a 64 of its id. */
  static long livenessKey(String nodeId) {
    long h = 0xcbf29ce484222325L;
    for (byte b : ("rhumbatron-node:" + nodeId).getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    return h;
  }

  long livenessKey() {
    return livenessKey;
  }

  /**
   * Runs {@code work} in one transaction on this connection, opening it (and taking the liveness
   * lock) first when there is none; a connection that failed is closed, and the next call opens
   * another.
   */
  <T> T run(TxWork<T> work) {
    if (session == null) {
      session = database.openSession(applicationName(nodeId));
      livenessHeld = false;
    }
    try {
      if (!livenessHeld) {
        livenessHeld =
            session.inTransaction(
                tx ->
                    tx.queryFirst(
                            "SELECT pg_try_advisory_lock(?)", rs -> rs.getBoolean(1), livenessKey)
                        .orElse(false));
        if (!livenessHeld) {
          warnHeldElsewhere();
        }
      }
      return session.inTransaction(work);
    } catch (DatabaseException e) {
      if (!session.isOpen()) {
        session.close();
        session = null;
      }
      throw e;
    }
  }

  /**
   * Ends every database session of {@code owner} (its pool and its own session): their open
   * transactions roll back. Allowed between sessions of one database role; where it is not, the
   * takeover waits for the server's idle timeout as before.
   */
  void endSessionsOf(String owner) {
    try {
      int ended =
          run(
              tx ->
                  tx.queryFirst(
                          "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))"
                              + " FROM pg_stat_activity WHERE application_name = ?"
                              + " AND datname = current_database() AND pid <> pg_backend_pid()",
                          rs -> rs.getInt(1),
                          applicationName(owner))
                      .orElse(0));
      if (ended > 0) {
        log.info(
            "cluster node {} ended {} database sessions of {}, which lost its duties",
            nodeId,
            ended,
            owner);
      }
    } catch (DatabaseException e) {
      log.warn("cluster node {} cannot end the sessions of {}: {}", nodeId, owner, e.toString());
    }
  }

  private void warnHeldElsewhere() {
    long now = clock.millis();
    if (now - warnedMs >= 60_000) {
      warnedMs = now;
      log.warn(
          "cluster node {}: another process holds this node id's liveness lock (an earlier run"
              + " still alive?); until it is gone, other nodes see this one by its heartbeat",
          nodeId);
    }
  }

  @Override
  public void close() {
    if (session != null) {
      session.close();
      session = null;
    }
  }
}
