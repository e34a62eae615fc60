package org.rhumbatron.router.causal;

import java.util.List;
import java.util.Set;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.router.claims.EventClaims;
import org.rhumbatron.router.run.BatchOutcome;
import org.rhumbatron.router.run.ClaimingTemplate;
import org.rhumbatron.router.run.SubscriptionHandler;

/**
 * The causal-router subscription of a stream: claims the batch's events and routes the fresh ones
 * in one transaction. A record that does not decode fails; the others still route. Before the
 * transaction the router prepares the events not claimed yet (its Clef-flash questions).
 */
public final class CausalRouterSubscription implements SubscriptionHandler {
  private static final String CONSUMER = Subscription.CAUSAL_ROUTER.durableName();

  private final Database database;
  private final EventClaims claims;
  private final CausalBatchRouter router;

  public CausalRouterSubscription(Database database, EventClaims claims, CausalBatchRouter router) {
    this.database = database;
    this.claims = claims;
    this.router = router;
  }

  @Override
  public Subscription subscription() {
    return Subscription.CAUSAL_ROUTER;
  }

  @Override
  public BatchOutcome handle(int streamIndex, List<EventRecord> records) {
    return ClaimingTemplate.all().handle(records, events -> route(streamIndex, events));
  }

  private ClaimingTemplate.Report route(int streamIndex, List<EventRecord> records) {
    List<Event> events = records.stream().map(EventRecord::event).toList();
    try {
      List<Event> toPrepare = events.stream().filter(router::prepares).toList();
      CausalBatchRouter batch = router;
      if (!toPrepare.isEmpty()) {
        Set<String> claimed =
            claims.claimedAmong(
                database, CONSUMER, toPrepare.stream().map(Event::eventId).toList());
        batch =
            router.prepare(toPrepare.stream().filter(e -> !claimed.contains(e.eventId())).toList());
      }
      CausalBatchRouter prepared = batch;
      database.inTransaction(
          tx -> {
            List<Event> freshEvents = claims.claimFresh(tx, streamIndex, CONSUMER, events);
            prepared.routeCausalBatch(tx, freshEvents);
            return null;
          });
      return ClaimingTemplate.Report.applied();
    } catch (RuntimeException e) {
      return ClaimingTemplate.Report.failed("routeCausalBatch", records, e);
    }
  }
}
