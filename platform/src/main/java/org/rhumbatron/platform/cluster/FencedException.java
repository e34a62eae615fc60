package org.rhumbatron.platform.cluster;

import org.rhumbatron.platform.db.DatabaseException;

/**
 * A write that relies on owning a duty found, inside its transaction, that this node no longer
 * holds the duty at its epoch: the transaction rolls back and nothing of it lands.
 */
public final class FencedException extends DatabaseException {
  private final Duty duty;
  private final long heldEpoch;
  private final long currentEpoch;

  public FencedException(
      Duty duty, String nodeId, long heldEpoch, long currentEpoch, String owner) {
    super(
        "write refused: "
            + duty.key()
            + " is held by "
            + (owner == null ? "no node" : owner)
            + " at epoch "
            + currentEpoch
            + ", node "
            + nodeId
            + (heldEpoch == 0 ? " holds no epoch of it" : " held epoch " + heldEpoch));
    this.duty = duty;
    this.heldEpoch = heldEpoch;
    this.currentEpoch = currentEpoch;
  }

  public Duty duty() {
    return duty;
  }

  /** The epoch this node held when it wrote; 0 when it held none. */
  public long heldEpoch() {
    return heldEpoch;
  }

  public long currentEpoch() {
    return currentEpoch;
  }

  /** The fenced refusal in {@code e}'s cause chain, if any (handlers wrap what they catch). */
  public static FencedException in(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof FencedException f) {
        return f;
      }
    }
    return null;
  }
}
