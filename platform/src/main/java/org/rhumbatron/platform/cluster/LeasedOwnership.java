package org.rhumbatron.platform.cluster;

import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.rhumbatron.platform.cluster.ClusterRows.LeaseRow;
import org.rhumbatron.platform.cluster.ClusterRows.Snapshot;
import org.rhumbatron.platform.concurrent.DaemonThreads;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Tx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Duties held through lease rows in PostgreSQL ({@code cluster_leases}: duty, owner, epoch,
 * expiry), with a heartbeat row per node ({@code cluster_nodes}). Every {@code cluster.poll} the
 * node reads the live nodes and the leases; every {@code cluster.heartbeat} it also writes its
 * heartbeat and renews its leases. Each duty belongs to the live node that rendezvous hashing
 * picks; that node takes it once it is free (released, or its lease expired on the database's
 * clock) with one conditional UPDATE that increments the epoch. A holder that is no longer the pick
 * hands the duty over. Expiry only decides when a duty may be taken; whether a write commits is the
 * fence's ({@link #fence}): the lease row read {@code FOR KEY SHARE} in the write's transaction,
 * which a takeover's {@code FOR UPDATE} must wait for; renewals do not. A node whose process died
 * is gone at once: its liveness lock ({@link NodeSession}) is free, and its duties are taken at the
 * next round; the taker ends a previous holder's sessions first.
 */
public final class LeasedOwnership implements DutyOwnership {
  private static final Logger log = LoggerFactory.getLogger(LeasedOwnership.class);

  private final Database database;
  private final String nodeId;
  private final Supplier<String> address;
  private final Duration heartbeat;
  private final Duration lease;
  private final Duration poll;
  private final Clock clock;
  private final Map<Duty, Long> held = new ConcurrentHashMap<>();
  private final List<DutyListener> listeners = new CopyOnWriteArrayList<>();
  private final LongAdder changes = new LongAdder();
  private final LongAdder fenced = new LongAdder();
  private final ScheduledExecutorService loop;
  private ScheduledFuture<?> ticking;
  // Touched on the loop thread only.
  private long lastBeatMs = Long.MIN_VALUE / 2;
  private volatile long lastRenewedMs;
  private volatile boolean closed;
  // Touched on the loop thread, and in close once the loop ended.
  private final NodeSession session;

  public LeasedOwnership(
      Database database,
      String nodeId,
      Supplier<String> address,
      Duration heartbeat,
      Duration lease,
      Duration poll,
      Clock clock) {
    this.database = database;
    this.nodeId = Objects.requireNonNull(nodeId, "nodeId");
    this.address = address;
    this.heartbeat = heartbeat;
    this.lease = lease;
    this.poll = poll;
    this.clock = clock;
    this.session = new NodeSession(database, nodeId, clock);
    this.loop =
        Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("cluster-" + nodeId));
  }

  /** The {@code application_name} of a node's database sessions. */
  public static String applicationName(String nodeId) {
    return NodeSession.applicationName(nodeId);
  }

  @Override
  public String nodeId() {
    return nodeId;
  }

  @Override
  public boolean owns(Duty duty) {
    // Past its lease without a renewal (a paused process waking up), the node stops starting
    // duty work before its loop has run and stepped down.
    return held.containsKey(duty) && clock.millis() - lastRenewedMs <= lease.toMillis();
  }

  @Override
  public long fence(Tx tx, Duty duty) throws SQLException {
    Long mine = held.get(duty);
    // FOR KEY SHARE: a takeover locks this row FOR UPDATE first ({@link #take}), so it waits
    // until this transaction ends, while a renewal (an UPDATE of expires_at alone) neither waits
    // for it nor makes it wait. The local timeout ends this transaction's session if its client
    // stalls with it open (a paused node), so the wait is bounded.
    Optional<LeaseRow> row =
        tx.queryFirst(
            "SELECT owner_node, epoch, set_config('idle_in_transaction_session_timeout', ?, true)"
                + " FROM cluster_leases WHERE duty = ? FOR KEY SHARE",
            rs -> new LeaseRow(rs.getString(1), rs.getLong(2), false),
            Long.toString(lease.toMillis()),
            duty.key());
    LeaseRow current = row.orElse(new LeaseRow(null, 0, true));
    if (mine != null && nodeId.equals(current.owner()) && mine == current.epoch()) {
      return mine;
    }
    fenced.increment();
    if (mine != null) {
      stepDown(duty, mine, "its epoch " + mine + " was taken: " + describe(current));
    }
    throw new FencedException(
        duty, nodeId, mine == null ? 0 : mine, current.epoch(), current.owner());
  }

  @Override
  public void listen(DutyListener listener) {
    listeners.add(listener);
  }

  @Override
  public synchronized void start() {
    // The first round before start returns: what starts next (the lost-tail repair, the router's
    // catch-up) finds the duties this node takes at once.
    try {
      loop.submit(
              () -> {
                session.run(tx -> joinRow(tx));
                lastRenewedMs = clock.millis();
                tickQuietly();
              })
          .get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException("the first lease round failed", e.getCause());
    }
    resume();
  }

  private Void joinRow(Tx tx) throws SQLException {
    ClusterRows.join(tx, nodeId, address.get(), session.livenessKey());
    return null;
  }

  /**
   * Stops the heartbeats and the lease checks without releasing anything, as a paused process would
   * (the failover tests and the checker's node-pause); {@link #resume} goes on.
   */
  public synchronized void suspend() {
    if (ticking != null) {
      ticking.cancel(false);
      ticking = null;
    }
  }

  /** Starts the heartbeats and lease checks again after {@link #suspend} (or at start). */
  public synchronized void resume() {
    if (closed || ticking != null) {
      return;
    }
    ticking =
        loop.scheduleWithFixedDelay(
            this::tickQuietly, poll.toMillis(), poll.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void tickQuietly() {
    try {
      tick();
    } catch (RuntimeException e) {
      log.warn("cluster node {}: lease check failed: {}", nodeId, e.toString());
    }
  }

  /** One round: heartbeat and renewal when due, then take, keep or hand over each duty. */
  void tick() {
    long startMs = clock.millis();
    if (!held.isEmpty() && startMs - lastRenewedMs > lease.toMillis()) {
      for (Map.Entry<Duty, Long> e : Map.copyOf(held).entrySet()) {
        stepDown(e.getKey(), e.getValue(), "it could not renew its lease within " + lease);
      }
    }
    boolean beat = startMs - lastBeatMs >= heartbeat.toMillis();
    Map<Duty, Long> renewed = new EnumMap<>(Duty.class);
    Snapshot s =
        session.run(
            tx -> {
              renewed.clear();
              if (beat) {
                ClusterRows.beatAndRenew(
                    tx, nodeId, address.get(), session.livenessKey(), lease, renewed);
              }
              return ClusterRows.snapshot(tx, lease);
            });
    if (beat) {
      lastBeatMs = startMs;
      lastRenewedMs = startMs;
      for (Map.Entry<Duty, Long> e : Map.copyOf(held).entrySet()) {
        if (!e.getValue().equals(renewed.get(e.getKey()))) {
          stepDown(e.getKey(), e.getValue(), "its lease was not renewed: another node holds it");
        }
      }
    }
    for (Duty d : Duty.values()) {
      LeaseRow row = s.leases().get(d);
      if (row == null) {
        continue; // the migration makes every row; nothing to take
      }
      String pick = Rendezvous.owner(d, s.live());
      Long mine = held.get(d);
      if (mine != null) {
        if (!nodeId.equals(row.owner()) || mine != row.epoch()) {
          stepDown(d, mine, "its epoch " + mine + " was taken: " + describe(row));
        } else if (pick != null && !nodeId.equals(pick)) {
          handOver(d, mine, pick);
        }
      } else if (nodeId.equals(pick)
          && (row.owner() == null
              || row.expired()
              || nodeId.equals(row.owner())
              || s.gone().contains(row.owner()))) {
        // (A row this node id holds but this process does not: an earlier run of the node.)
        take(d, row);
      }
    }
  }

  /**
   * Takes {@code duty} if it is still as read: free, expired or its holder gone, at that epoch. The
   * sessions of a previous holder are ended first: a paused one would otherwise hold its fenced
   * writes' locks, and the takeover with them, until the server's idle timeout.
   */
  private void take(Duty duty, LeaseRow seen) {
    if (seen.owner() != null && !nodeId.equals(seen.owner())) {
      session.endSessionsOf(seen.owner());
    }
    Optional<Long> epoch =
        session.run(tx -> ClusterRows.take(tx, duty, nodeId, seen.epoch(), lease));
    if (epoch.isEmpty()) {
      return; // another node was quicker, or the holder renewed: read again next round
    }
    held.put(duty, epoch.get());
    changes.increment();
    log.info(
        "cluster node {} took {} at epoch {} (from {})",
        nodeId,
        duty.key(),
        epoch.get(),
        seen.owner() == null
            ? "nobody"
            : seen.owner() + (seen.expired() ? ", lease expired" : ", its process is gone"));
    for (DutyListener l : listeners) {
      try {
        l.gained(duty, epoch.get());
      } catch (RuntimeException e) {
        log.warn("starting {} on node {} failed: {}", duty.key(), nodeId, e.toString());
      }
    }
  }

  /** Lets go of {@code duty} at once so that {@code pick} takes it on its next round. */
  private void handOver(Duty duty, long epoch, String pick) {
    if (!held.remove(duty, epoch)) {
      return;
    }
    changes.increment();
    notifyLost(duty);
    session.run(
        tx ->
            tx.update(
                "UPDATE cluster_leases SET owner_node = NULL, expires_at = now()"
                    + " WHERE duty = ? AND owner_node = ? AND epoch = ?",
                duty.key(),
                nodeId,
                epoch));
    log.info("cluster node {} hands {} (epoch {}) over to {}", nodeId, duty.key(), epoch, pick);
  }

  /** Stops {@code duty} at once after finding it lost; a WARN once per loss. */
  private void stepDown(Duty duty, long epoch, String why) {
    if (!held.remove(duty, epoch)) {
      return;
    }
    changes.increment();
    log.warn(
        "cluster node {} stops {}: {}; it takes duties again only through the assignment",
        nodeId,
        duty.key(),
        why);
    notifyLost(duty);
  }

  private void notifyLost(Duty duty) {
    for (DutyListener l : listeners) {
      try {
        l.lost(duty);
      } catch (RuntimeException e) {
        log.warn("stopping {} on node {} failed: {}", duty.key(), nodeId, e.toString());
      }
    }
  }

  private static String describe(LeaseRow row) {
    return row.owner() == null
        ? "nobody holds it (epoch " + row.epoch() + ")"
        : row.owner() + " holds it at epoch " + row.epoch();
  }

  @Override
  public Optional<Long> epoch(Duty duty) {
    return Optional.ofNullable(held.get(duty));
  }

  @Override
  public ClusterView view() {
    return database.read(tx -> ClusterRows.view(tx, nodeId, lease));
  }

  @Override
  public long ownershipChanges() {
    return changes.sum();
  }

  @Override
  public long fencedWrites() {
    return fenced.sum();
  }

  /** Releases every duty at once (their writes in flight are fenced) and marks the node stopped. */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      suspend();
    }
    loop.shutdown();
    try {
      loop.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (Map.Entry<Duty, Long> e : Map.copyOf(held).entrySet()) {
      if (held.remove(e.getKey(), e.getValue())) {
        changes.increment();
        notifyLost(e.getKey());
      }
    }
    try {
      database.inTransaction(
          tx -> {
            tx.update(
                "UPDATE cluster_leases SET owner_node = NULL, expires_at = now()"
                    + " WHERE owner_node = ?",
                nodeId);
            tx.update(
                "UPDATE cluster_nodes SET state = ? WHERE node_id = ?",
                NodeState.STOPPED.dbName(),
                nodeId);
            return null;
          });
      log.info("cluster node {} stopped and released its duties", nodeId);
    } catch (RuntimeException e) {
      log.warn(
          "cluster node {} could not release its duties ({}): they move when their leases expire",
          nodeId,
          e.toString());
    }
    session.close(); // and with it the liveness lock
  }
}
