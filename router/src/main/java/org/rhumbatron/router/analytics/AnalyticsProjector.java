package org.rhumbatron.router.analytics;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.DatabaseException;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.platform.metrics.DataPoint;
import org.rhumbatron.platform.metrics.MetricsBinding;
import org.rhumbatron.platform.metrics.PlatformMetrics;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.router.claims.EventClaims;
import org.rhumbatron.router.run.BatchOutcome;
import org.rhumbatron.router.run.ClaimingTemplate;
import org.rhumbatron.router.run.SubscriptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The seed's {@code analytics-projector}: claims each Event ({@code claimEvents}) and writes one
 * EVENT_METRICS data point per fresh Event of a mapped type, claim and point in one transaction, so
 * a redelivery writes no second point. The sweep runs one batch per tick, the catch-up more while
 * it is behind, and a batch handles at most {@link Settings#ANALYTICS_POINTS_PER_TICK} (100)
 * records: the rest are deferred unclaimed and come back with the next delivery. A malformed record
 * fails with its decode error (the run dead-letters it after 5 failures); the batch's good Events
 * are still counted. A point is about its Event: value 1, the Event's project and id, its timestamp
 * as {@code recorded_at_ms}, and the labels event_type, tenant_id, stream, change_id and task_id
 * (the last two when present).
 */
public final class AnalyticsProjector implements SubscriptionHandler {
  public static final String CONSUMER = Subscription.ANALYTICS_PROJECTOR.durableName();

  private static final Logger log = LoggerFactory.getLogger(AnalyticsProjector.class);

  private final Database db;
  private final EventClaims claims;
  private final PlatformMetrics eventMetrics;
  private final ClaimingTemplate claiming;

  public AnalyticsProjector(
      Database db, EventClaims claims, PlatformMetrics eventMetrics, Settings settings) {
    if (eventMetrics.binding() != MetricsBinding.EVENT_METRICS) {
      throw new IllegalArgumentException(
          "the analytics projector writes to EVENT_METRICS, not " + eventMetrics.binding());
    }
    this.db = db;
    this.claims = claims;
    this.eventMetrics = eventMetrics;
    this.claiming = ClaimingTemplate.taking(settings.get(Settings.ANALYTICS_POINTS_PER_TICK));
  }

  @Override
  public Subscription subscription() {
    return Subscription.ANALYTICS_PROJECTOR;
  }

  @Override
  public BatchOutcome handle(int streamIndex, List<EventRecord> records) {
    return claiming.handle(records, events -> project(streamIndex, events));
  }

  /** Claims {@code records}' events and writes a point for each fresh one of a mapped type. */
  private ClaimingTemplate.Report project(int streamIndex, List<EventRecord> records) {
    List<Event> events = records.stream().map(EventRecord::event).toList();
    try {
      int points =
          db.inTransaction(
              tx -> {
                int written = 0;
                for (Event e : claims.claimFresh(tx, streamIndex, CONSUMER, events)) {
                  Optional<DataPoint> point = point(streamIndex, e);
                  if (point.isPresent()) {
                    eventMetrics.write(tx, point.get());
                    written++;
                  }
                }
                return written;
              });
      log.debug(
          "analytics: {} points from {} events of stream {}", points, events.size(), streamIndex);
      return ClaimingTemplate.Report.applied();
    } catch (DatabaseException e) {
      // The transaction rolled back with its claims: every handled record comes back.
      return ClaimingTemplate.Report.failed("cannot write analytics points", records, e);
    }
  }

  static Optional<DataPoint> point(int streamIndex, Event e) {
    return EventMetricNames.of(e.eventType())
        .map(
            name ->
                new DataPoint(
                    name, 1, labels(streamIndex, e), e.projectId(), e.eventId(), e.timestamp()));
  }

  private static Map<String, String> labels(int streamIndex, Event e) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("event_type", e.eventType().wireName());
    labels.put("tenant_id", e.tenantId());
    labels.put("stream", String.format("%02d", streamIndex));
    if (e.changeId() != null) {
      labels.put("change_id", e.changeId());
    }
    if (e.taskId() != null) {
      labels.put("task_id", e.taskId());
    }
    return labels;
  }
}
