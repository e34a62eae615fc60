package org.rhumbatron.router.causal;

import java.sql.SQLException;
import java.util.List;
import java.util.Set;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.router.claims.EventClaims;
import org.rhumbatron.router.run.BatchOutcome;
import org.rhumbatron.router.run.ClaimingTemplate;
import org.rhumbatron.router.run.SubscriptionHandler;

/**
 * The causal-router subscription of a stream: for the batch's events not claimed yet, the router
 * prepares its Clef-flash questions, plans the route in a read and sends its commands; then one
 * transaction claims the events and writes what the route counts.
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
      CausalBatchRouter batch = router;
      if (events.stream().anyMatch(router::prepares)) {
        // The Clef-flash questions go out before the plan's read, and only for unclaimed Events.
        Set<String> claimed = claims.claimedAmong(database, CONSUMER, ids(events));
        List<Event> toPrepare =
            events.stream()
                .filter(e -> router.prepares(e) && !claimed.contains(e.eventId()))
                .toList();
        if (!toPrepare.isEmpty()) {
          batch = router.prepare(toPrepare);
        }
      }
      CausalBatchRouter prepared = batch;
      Plan plan = database.read(tx -> plan(tx, prepared, events));
      List<Event> unclaimed = plan.unclaimed();
      if (unclaimed.isEmpty()) {
        return ClaimingTemplate.Report.applied(); // a redelivery of what was routed
      }
      CausalBatchRouter.Routing routing = plan.routing();
      routing.send();
      database.inTransaction(
          tx -> {
            List<Event> fresh = claims.claimFresh(tx, streamIndex, CONSUMER, events);
            if (fresh.size() != unclaimed.size()) {
              // Claimed by another delivery since the plan: route again from what is left.
              throw new IllegalStateException(
                  (unclaimed.size() - fresh.size())
                      + " Events were claimed between the route's plan and its claims");
            }
            routing.record(tx, fresh);
            return null;
          });
      return ClaimingTemplate.Report.applied();
    } catch (RuntimeException e) {
      return ClaimingTemplate.Report.failed("routeCausalBatch", records, e);
    }
  }

  /** The batch's Events not claimed yet and their route, planned in one read. */
  private record Plan(List<Event> unclaimed, CausalBatchRouter.Routing routing) {}

  private Plan plan(Tx tx, CausalBatchRouter batch, List<Event> events) throws SQLException {
    Set<String> claimed = claims.claimedAmong(tx, CONSUMER, ids(events));
    List<Event> unclaimed = events.stream().filter(e -> !claimed.contains(e.eventId())).toList();
    return new Plan(unclaimed, unclaimed.isEmpty() ? null : batch.plan(tx, unclaimed));
  }

  private static List<String> ids(List<Event> events) {
    return events.stream().map(Event::eventId).toList();
  }
}
