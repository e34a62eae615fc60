package org.rhumbatron.router.analytics;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.platform.metrics.MetricsBinding;
import org.rhumbatron.platform.metrics.PlatformMetrics;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.router.EventLogFixture;
import org.rhumbatron.router.claims.EventClaims;
import org.rhumbatron.router.run.BatchOutcome;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/** The analytics projector on real fetched batches; run against SQLite and PostgreSQL. */
class AnalyticsProjectorTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  static final int STREAM = 5;
  static final Subscription SUB = Subscription.ANALYTICS_PROJECTOR;
  static final Instant AT = Instant.parse("2026-04-05T06:07:08.009Z");

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  final SettableClock clock = new SettableClock(Instant.parse("2026-04-05T07:00:00Z"));
  EventLogFixture log;
  Database db;

  record Point(
      String binding,
      String name,
      double value,
      String labels,
      String project,
      String event,
      long at) {}

  @BeforeEach
  void start() throws Exception {
    log = new EventLogFixture(nats.url());
    db = Database.open(db().url());
  }

  @AfterEach
  void stop() throws Exception {
    db.close();
    log.close();
  }

  AnalyticsProjector projector(Settings settings) {
    return new AnalyticsProjector(
        db,
        new EventClaims(clock),
        new PlatformMetrics(db, clock, MetricsBinding.EVENT_METRICS),
        settings);
  }

  List<Event> publish(EventType... types) throws Exception {
    List<Event> events = new ArrayList<>();
    for (EventType type : types) {
      Event e = EventLogFixture.event(type, "p-analytics", AT.plusMillis(events.size()));
      log.publish(STREAM, e);
      events.add(e);
    }
    return events;
  }

  List<Point> points() {
    return db.read(
        tx ->
            tx.query(
                "SELECT binding, name, value, labels, project_id, event_id, recorded_at_ms"
                    + " FROM platform_metrics ORDER BY id",
                rs ->
                    new Point(
                        rs.getString(1),
                        rs.getString(2),
                        rs.getDouble(3),
                        rs.getString(4),
                        rs.getString(5),
                        rs.getString(6),
                        rs.getLong(7))));
  }

  long claims() {
    return db.read(
        tx ->
            tx.queryLong(
                "SELECT COUNT(*) FROM processed_events WHERE consumer = ?", "analytics-projector"));
  }

  @DatabaseTest
  void eachFreshLifecycleEventWritesOneEventMetricsPoint() throws Exception {
    List<Event> events =
        publish(
            EventType.CHANGE_CREATED,
            EventType.TASK_COMPLETED,
            EventType.INTENT_DECLARED,
            EventType.AGENT_WOKEN,
            EventType.MODEL_ROUTED);
    List<EventRecord> batch = log.fetch(STREAM, SUB, 5);

    assertThat(projector(Settings.defaults()).handle(STREAM, batch).allRecordsApplied()).isTrue();

    List<Point> points = points();
    assertThat(points)
        .extracting(Point::name)
        .containsExactly("change_created", "task_completed", "agent_wakeup", "model_route");
    assertThat(points).allSatisfy(p -> assertThat(p.binding()).isEqualTo("EVENT_METRICS"));
    assertThat(points).allSatisfy(p -> assertThat(p.value()).isEqualTo(1.0));
    assertThat(points).allSatisfy(p -> assertThat(p.project()).isEqualTo("p-analytics"));
    assertThat(points.get(1).event()).isEqualTo(events.get(1).eventId());
    assertThat(points.get(1).at()).isEqualTo(events.get(1).timestamp().toEpochMilli());
    assertThat(points.get(1).labels())
        .isEqualTo(
            "{\"change_id\":\"chg-1\",\"event_type\":\"task.completed\",\"stream\":\"05\","
                + "\"task_id\":\"task-1\",\"tenant_id\":\"tenant-1\"}");
    assertThat(claims()).as("the unmapped intent.declared is claimed too").isEqualTo(5);
  }

  @DatabaseTest
  void theSameBatchDeliveredTwiceWritesNoSecondPoint() throws Exception {
    publish(EventType.TASK_READY, EventType.TASK_FAILED, EventType.RELEASE_COMPLETED);
    AnalyticsProjector projector = projector(Settings.defaults());
    List<EventRecord> first = log.fetch(STREAM, SUB, 3);
    projector.handle(STREAM, first);

    List<EventRecord> again = log.redeliver(STREAM, SUB, first);
    BatchOutcome outcome = projector.handle(STREAM, again);

    assertThat(outcome.allRecordsApplied()).isTrue();
    assertThat(points())
        .extracting(Point::name)
        .containsExactly("task_ready", "task_failed", "release_completed");
  }

  @DatabaseTest
  void theCapDefersTheRestUnclaimedAndTheNextDeliveryCountsThem() throws Exception {
    publish(
        EventType.TASK_READY,
        EventType.TASK_ASSIGNED,
        EventType.TASK_RUNNING,
        EventType.TASK_COMPLETED,
        EventType.CHANGE_COMPLETED);
    AnalyticsProjector projector =
        projector(Settings.defaults().with(Settings.ANALYTICS_POINTS_PER_TICK, 3));
    List<EventRecord> batch = log.fetch(STREAM, SUB, 5);

    BatchOutcome outcome = projector.handle(STREAM, batch);

    assertThat(outcome.failed()).isEmpty();
    assertThat(outcome.deferred()).containsExactlyElementsOf(batch.subList(3, 5));
    assertThat(points()).hasSize(3);
    assertThat(claims()).as("deferred events hold no claim").isEqualTo(3);

    // What the run does with a deferral: ack the applied, nak the deferred; they come back.
    batch.subList(0, 3).forEach(EventRecord::ack);
    List<EventRecord> next = log.redeliver(STREAM, SUB, outcome.deferred());
    assertThat(projector.handle(STREAM, next).allRecordsApplied()).isTrue();
    assertThat(points())
        .extracting(Point::name)
        .containsExactly(
            "task_ready", "task_assigned", "task_running", "task_completed", "change_completed");
  }

  @DatabaseTest
  void aMalformedRecordIsReportedMalformedAndTheOthersAreCounted() throws Exception {
    publish(EventType.CANDIDATE_VERIFIED);
    log.publishRaw(
        STREAM,
        "evt_0000000000000000000000000000beef",
        "{\"eventId\": 42}".getBytes(StandardCharsets.UTF_8));
    publish(EventType.CANONICAL_ADVANCED);
    List<EventRecord> batch = log.fetch(STREAM, SUB, 3);

    BatchOutcome outcome = projector(Settings.defaults()).handle(STREAM, batch);

    assertThat(outcome.malformed()).containsExactly(batch.get(1));
    assertThat(outcome.failed()).isEmpty();
    assertThat(points())
        .extracting(Point::name)
        .containsExactly("candidate_verified", "promotion_canonical_advanced");
  }

  @DatabaseTest
  void aBatchOfOnlyMalformedRecordsIsAllMalformedAndWritesNothing() throws Exception {
    for (int i = 1; i <= 5; i++) {
      log.publishRaw(
          STREAM, "evt_0000000000000000000000000000000" + i, "x".getBytes(StandardCharsets.UTF_8));
    }
    List<EventRecord> batch = log.fetch(STREAM, SUB, 5);

    BatchOutcome outcome = projector(Settings.defaults()).handle(STREAM, batch);

    assertThat(outcome.malformed()).containsExactlyElementsOf(batch);
    assertThat(outcome.failed()).isEmpty();
    assertThat(points()).isEmpty();
    assertThat(claims()).isZero();
  }

  @DatabaseTest
  void anEmptyBatchIsApplied() {
    assertThat(projector(Settings.defaults()).handle(STREAM, List.of()).allRecordsApplied())
        .isTrue();
    assertThat(points()).isEmpty();
  }

  @DatabaseTest
  void aDatabaseFailureFailsTheBatchAndRollsItsClaimsBack() throws Exception {
    publish(EventType.TASK_COMPLETED, EventType.TASK_FAILED);
    List<EventRecord> batch = log.fetch(STREAM, SUB, 2);
    db.inTransaction(tx -> tx.update("DROP TABLE platform_metrics"));

    BatchOutcome outcome = projector(Settings.defaults()).handle(STREAM, batch);

    assertThat(outcome.failed()).containsExactlyElementsOf(batch);
    assertThat(outcome.error()).startsWith("cannot write analytics points: ");
    assertThat(claims()).as("the claims rolled back with the points").isZero();
  }
}
