package org.rhumbatron.router.causal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.router.claims.EventClaims;
import org.rhumbatron.router.run.BatchOutcome;
import org.rhumbatron.router.run.SubscriptionHandler;

/**
 * The causal-router subscription of a stream: claims the batch's events and routes the fresh ones
 * in one transaction. A record that does not decode fails; the others still route.
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
    List<EventRecord> malformed = new ArrayList<>();
    List<EventRecord> decoded = new ArrayList<>();
    Map<String, Event> byId = new LinkedHashMap<>(); // stream order
    for (EventRecord r : records) {
      if (r.decoded()) {
        decoded.add(r);
        byId.putIfAbsent(r.event().eventId(), r.event());
      } else {
        malformed.add(r);
      }
    }
    List<EventRecord> failed = new ArrayList<>(malformed);
    List<String> errors = new ArrayList<>();
    malformed.forEach(
        r -> errors.add("seq " + r.streamSequence() + ": " + r.decodeError().getMessage()));
    if (!decoded.isEmpty()) {
      try {
        Set<String> claimed = claims.claimedAmong(database, CONSUMER, List.copyOf(byId.keySet()));
        CausalBatchRouter batch =
            router.prepare(
                byId.values().stream().filter(e -> !claimed.contains(e.eventId())).toList());
        database.inTransaction(
            tx -> {
              List<String> fresh = claims.claimEvents(tx, CONSUMER, List.copyOf(byId.keySet()));
              Set<String> freshIds = Set.copyOf(fresh);
              batch.routeCausalBatch(
                  tx, byId.values().stream().filter(e -> freshIds.contains(e.eventId())).toList());
              return null;
            });
      } catch (RuntimeException e) {
        failed.addAll(decoded);
        errors.add("routeCausalBatch: " + e.getMessage());
      }
    }
    return new BatchOutcome(List.of(), failed, errors.isEmpty() ? null : String.join("; ", errors));
  }
}
