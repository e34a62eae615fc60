package org.rhumbatron.platform.cluster;

import java.sql.SQLException;
import java.util.Optional;
import org.rhumbatron.platform.db.Tx;

/**
 * Which duties this node holds, and the fence its duty writes call. {@link #owns} decides whether
 * to start a piece of duty work (it may be stale by the time the work writes); {@link #fence},
 * inside the write's transaction, decides whether the write may commit.
 */
public interface DutyOwnership extends AutoCloseable {

  /** This node's id ({@code cluster.node-id}, or a fresh one per start). */
  String nodeId();

  /** Whether this node holds {@code duty} now, as far as it knows. */
  boolean owns(Duty duty);

  /** The epoch this node holds {@code duty} at, as far as it knows, or empty. */
  Optional<Long> epoch(Duty duty);

  /**
   * Checks, inside {@code tx}, that this node still holds {@code duty} at the epoch it took it
   * with, and returns that epoch; the check holds until {@code tx} ends (a takeover waits for it).
   *
   * @throws FencedException when another node took the duty over or this node released it
   */
  long fence(Tx tx, Duty duty) throws SQLException;

  /** Registers a listener for gained and lost duties (before {@link #start}). */
  void listen(DutyListener listener);

  /** Joins: writes the heartbeat row and takes the duties assigned to this node. */
  void start();

  ClusterView view();

  /** How many times this node gained or lost a duty. */
  long ownershipChanges();

  /** How many duty writes the fence refused on this node. */
  long fencedWrites();

  /** Stops the duties and hands them over at once (clean stop). */
  @Override
  void close();
}
