package org.rhumbatron.router.causal;

import java.sql.SQLException;
import java.util.List;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.Event;

/**
 * The seed's {@code routeCausalBatch}: what the fresh Events of one batch cause, planned before the
 * transaction that claims them ({@link #plan}) or run inside it; either way a throw leaves the
 * Events unclaimed and the batch counts as failed.
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

  /**
   * Plans the route of {@code unclaimed} in {@code read}, a read before the claiming transaction:
   * the commands go out and are stored by the queue before the claims are written (their ids derive
   * from the Events, so a redelivery's sends are dropped as repeats), and the claiming transaction
   * then writes only what the route counts. No write transaction waits for the queue. The default
   * plans nothing ahead: it routes in the claiming transaction.
   */
  default Routing plan(Tx read, List<Event> unclaimed) throws SQLException {
    return new Routing() {
      @Override
      public void send() {}

      @Override
      public void record(Tx tx, List<Event> fresh) throws SQLException {
        routeCausalBatch(tx, fresh);
      }
    };
  }

  /** A planned route of one batch. */
  interface Routing {
    /** Sends the planned commands and waits until the queue stored each; throws when one is not. */
    void send();

    /** In the claiming transaction, with the Events it claimed: what the route writes. */
    void record(Tx tx, List<Event> fresh) throws SQLException;
  }
}
