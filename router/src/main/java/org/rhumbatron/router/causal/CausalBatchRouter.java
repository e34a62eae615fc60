package org.rhumbatron.router.causal;

import java.sql.SQLException;
import java.util.List;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.Event;

/**
 * The seed's {@code routeCausalBatch}: what the fresh Events of one batch cause. It runs inside the
 * transaction that claims them, so a throw releases the claims and the batch counts as failed.
 */
@FunctionalInterface
public interface CausalBatchRouter {
  /** Routes nothing: core's wiring until the causal rules (their own issue) are plugged in. */
  CausalBatchRouter NO_RULES = (tx, fresh) -> {};

  /**
   * Before the claiming transaction, with the batch's unclaimed Events: asks what needs an answer
   * from outside the database (Clef-flash), so that no model call holds the transaction open.
   * Returns the router of this batch.
   */
  default CausalBatchRouter prepare(List<Event> unclaimed) {
    return this;
  }

  /** Whether {@link #prepare} has anything to ask about {@code e}; if none, no claim is read. */
  default boolean prepares(Event e) {
    return false;
  }

  void routeCausalBatch(Tx tx, List<Event> fresh) throws SQLException;
}
