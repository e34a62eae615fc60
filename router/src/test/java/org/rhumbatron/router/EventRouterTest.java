package org.rhumbatron.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.coordinator.view.ProjectView;
import org.rhumbatron.platform.eventlog.EventLogClient;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.platform.queue.JetStreamCommandTransport;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.router.claims.EventClaims;
import org.rhumbatron.router.projector.ProjectViewProjector;
import org.rhumbatron.router.run.BatchFailures;
import org.rhumbatron.router.run.BatchOutcome;
import org.rhumbatron.router.sweep.SweepTick;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/** The event router on a real nats-server; run against SQLite and PostgreSQL. */
class EventRouterTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  @TempDir Path dataDir;

  private RouterFixture f;

  RouterFixture fixture(Map<String, String> overrides) throws Exception {
    f = new RouterFixture(nats.url(), db().url(), dataDir, overrides);
    return f;
  }

  @AfterEach
  void close() throws Exception {
    if (f != null) {
      f.close();
    }
  }

  private void runOnce(int stream) {
    f.router.nudge(stream);
    f.router.drained(stream).join();
  }

  private long applied(String projectId) {
    return ProjectView.read(f.database, projectId).map(ProjectView::eventsApplied).orElse(0L);
  }

  @DatabaseTest
  void aNudgeProjectsTheEventsIntoTheViewAndTheFeedAndRoutesThem() throws Exception {
    fixture(Map.of());
    List<Event> routed = new java.util.concurrent.CopyOnWriteArrayList<>();
    f.causalRules = (tx, fresh) -> routed.addAll(fresh);
    List<Event> events = RouterEvents.changeWithTasks("p-view", "c-view", 3);
    f.publish(events);
    int stream = EventStreams.streamIndex("p-view");
    runOnce(stream);

    ProjectView view = ProjectView.read(f.database, "p-view").orElseThrow();
    assertThat(view.eventsApplied()).isEqualTo(7);
    assertThat(view.counts().get("change")).containsEntry("open", 1L);
    assertThat(view.counts().get("task")).containsEntry("completed", 3L);
    assertThat(view.lastEventId()).isEqualTo(events.get(6).eventId());
    assertThat(f.count("SELECT COUNT(*) FROM project_events WHERE project_id = ?", "p-view"))
        .isEqualTo(7);
    assertThat(routed)
        .extracting(Event::eventId)
        .containsExactlyElementsOf(events.stream().map(Event::eventId).toList());
  }

  @DatabaseTest
  void theSameBatchDeliveredTwiceAppliesEachEventOnce() throws Exception {
    fixture(Map.of());
    f.publish(RouterEvents.changeWithTasks("p-twice", "c-twice", 2));
    int stream = EventStreams.streamIndex("p-twice");
    List<EventRecord> batch = f.eventLog.fetch(stream, Subscription.PROJECT_VIEW_PROJECTOR, 100);
    assertThat(batch).hasSize(5);

    ProjectViewProjector projector = f.projector.forRun();
    assertThat(projector.handle(stream, batch).allRecordsApplied()).isTrue();
    assertThat(projector.handle(stream, batch).allRecordsApplied()).isTrue();

    assertThat(applied("p-twice")).isEqualTo(5);
    assertThat(projector.callsLeft()).as("a duplicate-only project costs no call").isEqualTo(14);
    assertThat(f.count("SELECT COUNT(*) FROM project_events WHERE project_id = ?", "p-twice"))
        .isEqualTo(5);
  }

  @DatabaseTest
  void anEventTwiceInOneBatchIsAppliedOnceWithOneFeedRow() throws Exception {
    fixture(Map.of());
    List<Event> events = RouterEvents.changeWithTasks("p-dup", "c-dup", 1);
    f.publish(events);
    // The same Event again under another msg id (a resend after the duplicate window).
    Event again = events.get(1);
    int stream = EventStreams.streamIndex("p-dup");
    f.publishRaw(stream, "resend-" + again.eventId(), new EnvelopeCodec().encodeEvent(again));
    List<EventRecord> batch = f.eventLog.fetch(stream, Subscription.PROJECT_VIEW_PROJECTOR, 100);
    assertThat(batch).hasSize(events.size() + 1);

    assertThat(f.projector.forRun().handle(stream, batch).allRecordsApplied()).isTrue();

    assertThat(applied("p-dup")).isEqualTo(events.size());
    assertThat(
            f.count(
                "SELECT COUNT(*) FROM project_events WHERE project_id = ? AND event_id = ?",
                "p-dup",
                again.eventId()))
        .isEqualTo(1);
  }

  @DatabaseTest
  void aRedeliveryAfterACrashBeforeTheAckAppliesNothingTwice() throws Exception {
    fixture(Map.of("router.ack-wait", "1s"));
    f.publish(RouterEvents.changeWithTasks("p-crash", "c-crash", 2));
    int stream = EventStreams.streamIndex("p-crash");
    List<EventRecord> first = f.eventLog.fetch(stream, Subscription.PROJECT_VIEW_PROJECTOR, 100);
    // The projector commits, then core dies before it acks: nothing settles the batch.
    assertThat(f.projector.forRun().handle(stream, first).allRecordsApplied()).isTrue();
    assertThat(applied("p-crash")).isEqualTo(5);

    List<EventRecord> again = new ArrayList<>();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              again.addAll(f.eventLog.fetch(stream, Subscription.PROJECT_VIEW_PROJECTOR, 100));
              return again.size() >= 5;
            });
    assertThat(again).allSatisfy(r -> assertThat(r.deliveredCount()).isEqualTo(2));
    BatchOutcome outcome = f.projector.forRun().handle(stream, again);
    assertThat(outcome.allRecordsApplied()).isTrue();
    again.forEach(EventRecord::ack);
    assertThat(applied("p-crash")).isEqualTo(5);
  }

  /**
   * A stream that lost its tail hands a sequence out again: a second undecodable record at the
   * sequence of an earlier dead-lettered one gets a dead letter of its own, naming it, at once.
   */
  @DatabaseTest
  void aMalformedRecordAtAReusedSequenceGetsItsOwnDeadLetter() throws Exception {
    fixture(Map.of());
    BatchFailures failures = failures();
    List<String> deadLetters = new ArrayList<>();
    for (String marker : List.of("poison-before-the-cut", "poison-after-the-cut")) {
      // Deleting the stream and making it again starts its sequences at 1, as a lost tail does.
      f.connection.jetStreamManagement().deleteStream(EventStreams.streamName(4));
      new JetStreamTopology(f.connection.jetStreamManagement(), f.settings).ensure();
      f.publishRaw(4, marker, ("{\"not\": \"" + marker + "\"}").getBytes(StandardCharsets.UTF_8));
      // A client of its own: the fixture's holds the consumer of the stream just deleted.
      EventRecord record = fetchOne(reader());
      assertThat(record.streamSequence()).isEqualTo(1);
      BatchFailures.Counted counted =
          failures.deadLetterMalformed(Subscription.PROJECT_VIEW_PROJECTOR, 4, List.of(record));
      assertThat(counted.deadLettered()).as("on its first failure").containsExactly(record);
      record.ack();
      deadLetters.addAll(
          f.database.read(
              tx ->
                  tx.query(
                      "SELECT command FROM dead_letters WHERE command LIKE ?",
                      rs -> rs.getString(1),
                      "%" + marker + "%")));
    }
    assertThat(deadLetters).hasSize(2);
    assertThat(f.count("SELECT COUNT(*) FROM k2_batch_failures")).as("nothing counted").isZero();
  }

  /**
   * A failed record was dead-lettered but its ack was lost, so it comes back, here with a new
   * failing record behind it. The old one is only acked again; the new one counts under its own key
   * and gets a dead letter that names it.
   */
  @DatabaseTest
  void aDeadLetteredRecordThatComesBackDoesNotHideTheRecordsWithIt() throws Exception {
    fixture(Map.of());
    BatchFailures failures = failures();
    Stream4Events events = new Stream4Events("p-back");
    EventLogClient reader = reader();
    String oldId = events.publish();
    EventRecord old = fetchOne(reader);
    for (int i = 0; i < 5; i++) {
      failures.recordFailure(Subscription.PROJECT_VIEW_PROJECTOR, 4, List.of(old), "failing");
    }
    assertThat(deadLettersNaming(oldId)).isEqualTo(1);

    String newId = events.publish();
    List<EventRecord> failed = new ArrayList<>(List.of(old, fetchOne(reader)));
    // As SubscriptionRun settles: what was handled before is acked, the rest nacked until the
    // verdict is a dead letter.
    int deliveries = 0;
    while (!failed.isEmpty() && deliveries < 10) {
      deliveries++;
      BatchFailures.Counted counted =
          failures.recordFailure(Subscription.PROJECT_VIEW_PROJECTOR, 4, failed, "failing");
      failed.removeAll(counted.handledBefore());
      if (counted.verdict() == BatchFailures.Verdict.DEAD_LETTERED) {
        failed.clear();
      }
    }
    assertThat(deliveries).as("the new record's own 5 failures").isEqualTo(5);
    assertThat(deadLettersNaming(newId)).as("a dead letter names the new record").isEqualTo(1);
    assertThat(deadLettersNaming(oldId)).isEqualTo(1);
  }

  /** The same for a malformed record: the old one is acked again, the new one dead-lettered. */
  @DatabaseTest
  void aDeadLetteredMalformedRecordThatComesBackDoesNotHideTheOneWithIt() throws Exception {
    fixture(Map.of());
    BatchFailures failures = failures();
    EventLogClient reader = reader();
    f.publishRaw(4, "poison-old", "{\"not\": \"poison-old\"}".getBytes(StandardCharsets.UTF_8));
    EventRecord old = fetchOne(reader);
    failures.deadLetterMalformed(Subscription.PROJECT_VIEW_PROJECTOR, 4, List.of(old));
    assertThat(deadLettersNaming("poison-old")).isEqualTo(1);

    f.publishRaw(4, "poison-new", "{\"not\": \"poison-new\"}".getBytes(StandardCharsets.UTF_8));
    EventRecord fresh = fetchOne(reader);
    BatchFailures.Counted counted =
        failures.deadLetterMalformed(Subscription.PROJECT_VIEW_PROJECTOR, 4, List.of(old, fresh));
    assertThat(counted.handledBefore()).containsExactly(old);
    assertThat(counted.deadLettered()).containsExactly(fresh);
    assertThat(counted.verdict()).isEqualTo(BatchFailures.Verdict.DEAD_LETTERED);
    assertThat(deadLettersNaming("poison-new")).isEqualTo(1);
    assertThat(deadLettersNaming("poison-old")).isEqualTo(1);
  }

  /**
   * Redeliveries regroup failed records: each comes due on its own and a fetch takes whatever is
   * due. A failing record still reaches its dead letter at its 5th failure, whatever came with it
   * each time.
   */
  @DatabaseTest
  void aFailingRecordIsDeadLetteredAtItsFifthFailureHoweverItsDeliveriesAreGrouped()
      throws Exception {
    fixture(Map.of());
    BatchFailures failures = failures();
    Stream4Events events = new Stream4Events("p-grouped");
    EventLogClient reader = reader();
    List<EventRecord> failing = new ArrayList<>();
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      ids.add(events.publish());
      failing.add(fetchOne(reader));
    }
    EventRecord a = failing.get(0);
    EventRecord b = failing.get(1);
    EventRecord c = failing.get(2);
    List<List<EventRecord>> deliveries =
        List.of(List.of(a, b, c), List.of(b, c, a), List.of(c, a, b), List.of(a, b), List.of(b, a));
    for (List<EventRecord> delivery : deliveries.subList(0, 4)) {
      assertThat(
              failures
                  .recordFailure(Subscription.PROJECT_VIEW_PROJECTOR, 4, delivery, "failing")
                  .verdict())
          .isEqualTo(BatchFailures.Verdict.NACK);
    }
    BatchFailures.Counted fifth =
        failures.recordFailure(
            Subscription.PROJECT_VIEW_PROJECTOR, 4, deliveries.get(4), "failing");
    assertThat(fifth.deadLettered()).as("a and b failed 5 times").containsExactlyInAnyOrder(a, b);
    assertThat(fifth.nacked()).isEmpty();
    assertThat(deadLettersNaming(ids.get(0))).isEqualTo(1);
    assertThat(deadLettersNaming(ids.get(1))).isEqualTo(1);
    assertThat(deadLettersNaming(ids.get(2))).as("c failed 3 times").isZero();
    BatchFailures.Counted sixth =
        failures.recordFailure(Subscription.PROJECT_VIEW_PROJECTOR, 4, List.of(a, c), "failing");
    assertThat(sixth.handledBefore()).as("a was dead-lettered before").containsExactly(a);
    assertThat(sixth.nacked()).containsExactly(c);
    assertThat(
            failures
                .recordFailure(Subscription.PROJECT_VIEW_PROJECTOR, 4, List.of(c), "failing")
                .deadLettered())
        .containsExactly(c);
    assertThat(deadLettersNaming(ids.get(2))).isEqualTo(1);
  }

  private BatchFailures failures() {
    return new BatchFailures(f.database, new EventClaims(f.clock), f.clock, 5);
  }

  private EventLogClient reader() throws Exception {
    return new EventLogClient(f.connection, new EnvelopeCodec(), f.settings);
  }

  /** Valid Events of one Project on stream 4, each of its own Change; returns the event id. */
  private final class Stream4Events {
    private final String project;
    private int changes;

    Stream4Events(String prefix) {
      this.project = RouterEvents.projectsOnStream(4, 1, prefix).get(0);
    }

    String publish() throws Exception {
      Event e = RouterEvents.event(project, "c-" + ++changes, null, EventType.CHANGE_CREATED, null);
      f.publish(List.of(e));
      return e.eventId();
    }
  }

  private static EventRecord fetchOne(EventLogClient reader) {
    List<EventRecord> records = new ArrayList<>();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              records.addAll(reader.fetch(4, Subscription.PROJECT_VIEW_PROJECTOR, 10));
              return !records.isEmpty();
            });
    assertThat(records).hasSize(1);
    return records.get(0);
  }

  private long deadLettersNaming(String marker) {
    return f.database.read(
        tx ->
            tx.queryLong(
                "SELECT COUNT(*) FROM dead_letters WHERE command LIKE ?", "%" + marker + "%"));
  }

  @DatabaseTest
  void aFailingEventFailsFiveTimesAndAMalformedRecordOnceWhileOtherProjectsFlow() throws Exception {
    fixture(Map.of("router.nack-delay", "100ms"));
    List<String> projects = RouterEvents.projectsOnStream(4, 2, "p-poison");
    String poisoned = projects.get(0);
    String healthy = projects.get(1);
    // Valid JSON and a valid envelope that the projector cannot apply: a task.ready without Task.
    Event poison = RouterEvents.event(poisoned, "c-poison", null, EventType.TASK_READY, null);
    f.publish(List.of(poison));
    f.publishRaw(4, "not-an-envelope", "{\"eventId\": 42}".getBytes(StandardCharsets.UTF_8));
    f.publish(RouterEvents.changeWithTasks(healthy, "c-healthy", 1));

    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              runOnce(4);
              return f.count(
                          "SELECT COUNT(*) FROM dead_letters WHERE kind = 'event_batch'"
                              + " AND command_id LIKE 'batch:project-view-projector:%'")
                      >= 2
                  && f.count("SELECT COUNT(*) FROM k2_batch_failures WHERE failures >= 5") >= 1;
            });
    // The healthy project flowed from the first run on; later events of it flow too.
    assertThat(applied(healthy)).isEqualTo(3);
    f.publish(
        List.of(RouterEvents.event(healthy, "c-later", null, EventType.CHANGE_CREATED, null)));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              runOnce(4);
              return applied(healthy) >= 4;
            });
    assertThat(applied(healthy)).isEqualTo(4);

    // Run until the failed records are settled everywhere, then look at the dead letters.
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              runOnce(4);
              return f.count("SELECT COUNT(*) FROM k2_batch_failures WHERE failures < 5") == 0;
            });
    Map<String, Long> failuresByDescription = new java.util.HashMap<>();
    f.database
        .read(
            tx ->
                tx.query(
                    "SELECT command, delivery_count, reason FROM dead_letters WHERE command_id"
                        + " LIKE 'batch:project-view-projector:%'",
                    rs -> List.of(rs.getString(1), rs.getString(2), rs.getString(3))))
        .forEach(
            row ->
                failuresByDescription.put(
                    row.get(0) + "\n" + row.get(2), Long.valueOf(row.get(1))));
    assertThat(failuresByDescription).hasSize(2);
    ObjectMapper json = new ObjectMapper();
    for (Map.Entry<String, Long> e : failuresByDescription.entrySet()) {
      String description = e.getKey().substring(0, e.getKey().indexOf('\n'));
      String reason = e.getKey().substring(e.getKey().indexOf('\n') + 1);
      assertThat(json.readTree(description).get("consumer").asText())
          .isEqualTo("project-view-projector");
      if (description.contains("not-an-envelope")) {
        assertThat(description).doesNotContain(poison.eventId());
        assertThat(e.getValue()).as("the malformed record failed once").isEqualTo(1);
        assertThat(reason)
            .startsWith("malformed envelope at stream sequence 2 (not-an-envelope): ");
      } else {
        assertThat(description).contains("\"eventId\":\"" + poison.eventId());
        assertThat(e.getValue()).as("the failing event failed 5 times").isEqualTo(5);
      }
    }
    assertThat(
            f.count(
                "SELECT COUNT(*) FROM k2_batch_failures WHERE consumer = 'project-view-projector'"))
        .as("only the failing event counted")
        .isEqualTo(1);
    assertThat(
            f.count(
                "SELECT COUNT(*) FROM processed_events WHERE consumer = 'project-view-projector'"
                    + " AND event_id = ?",
                poison.eventId()))
        .as("the dead-lettered event is marked processed")
        .isEqualTo(1);
    assertThat(applied(poisoned)).isZero();
  }

  /**
   * While the COMMANDS stream is out of reach every send of the causal batch fails with "503 No
   * Responders", many more times than the 5 failures that dead-letter a batch: that is NATS's
   * failure, not the Event's, so nothing is counted or dead-lettered, and the batch routes once the
   * stream is back.
   */
  @DatabaseTest
  void aCausalBatchWhoseSendsFindNoRespondersWaitsInsteadOfBeingDeadLettered() throws Exception {
    fixture(Map.of("router.nack-delay", "100ms"));
    Commands commands = new Commands(new JetStreamCommandTransport(f.connection), f.codec);
    AtomicInteger sends = new AtomicInteger();
    f.causalRules =
        (tx, fresh) -> {
          for (Event e : fresh) {
            sends.incrementAndGet();
            try {
              commands
                  .send(
                      Command.builder()
                          .commandId("cmd_" + e.eventId())
                          .commandType(CommandType.AGENT_WAKE)
                          .projectId(e.projectId())
                          .changeId(e.changeId())
                          .taskId("t-1")
                          .createdAt(f.clock.instant())
                          .build())
                  .get(5, TimeUnit.SECONDS);
            } catch (Exception failed) {
              throw new IllegalStateException("a causal command was not sent", failed);
            }
          }
        };
    f.connection.jetStreamManagement().deleteStream(Queue.STREAM_NAME);
    String p = RouterEvents.projectsOnStream(4, 1, "p-no-responders").get(0);
    Event created = RouterEvents.event(p, "c-wait", null, EventType.CHANGE_CREATED, null);
    f.publish(List.of(created));

    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              runOnce(4);
              return sends.get() >= 8 || f.count("SELECT COUNT(*) FROM dead_letters") > 0;
            });
    assertThat(f.count("SELECT COUNT(*) FROM dead_letters")).as("dead letters").isZero();
    assertThat(f.count("SELECT COUNT(*) FROM k2_batch_failures")).as("failures counted").isZero();

    new JetStreamTopology(f.connection.jetStreamManagement(), f.settings).ensure();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              runOnce(4);
              return f.connection
                      .jetStreamManagement()
                      .getStreamInfo(Queue.STREAM_NAME)
                      .getStreamState()
                      .getMsgCount()
                  == 1;
            });
    assertThat(f.count("SELECT COUNT(*) FROM dead_letters")).isZero();
  }

  @DatabaseTest
  void aFailedBatchComesBackAfterItsNackDelayWithoutAnotherNudge() throws Exception {
    fixture(Map.of("router.nack-delay", "200ms"));
    // A task.ready without its Task: the view rejects it, and the causal rules throw on it.
    String p = RouterEvents.projectsOnStream(4, 1, "p-lone").get(0);
    Event lone = RouterEvents.event(p, "c-lone", null, EventType.TASK_READY, null);
    f.causalRules =
        (tx, fresh) -> {
          throw new IllegalStateException("the rules refuse " + fresh.get(0).eventId());
        };
    f.publish(List.of(lone));
    runOnce(4);

    // One nudge only: the four more failures that dead-letter it come from the nack delay.
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                f.count(
                        "SELECT COUNT(*) FROM dead_letters WHERE kind = 'event_batch'"
                            + " AND command LIKE ?",
                        "%" + lone.eventId() + "%")
                    == 2);
    assertThat(
            f.count(
                "SELECT COUNT(*) FROM dead_letters WHERE delivery_count = 5"
                    + " AND (command_id LIKE 'batch:project-view-projector:%'"
                    + " OR command_id LIKE 'batch:causal-router:%')"))
        .isEqualTo(2);
  }

  /**
   * A record that does not decode never will: every consumer of the stream dead-letters it on its
   * first delivery, naming the decode error, and acks it, so the seed's 30 s nack delay holds
   * nothing up; the records behind it are applied and routed by the same run.
   */
  @DatabaseTest
  void aMalformedRecordIsDeadLetteredOnItsFirstDeliveryAndTheStreamFlowsOn() throws Exception {
    fixture(Map.of()); // the seed's 30 s nack delay
    assertThat(f.settings.get(org.rhumbatron.platform.config.Settings.ROUTER_NACK_DELAY))
        .isEqualTo(Duration.ofSeconds(30));
    List<Event> routed = new java.util.concurrent.CopyOnWriteArrayList<>();
    f.causalRules = (tx, fresh) -> routed.addAll(fresh);
    String p = RouterEvents.projectsOnStream(4, 1, "p-behind").get(0);
    byte[] garbage = "{\"eventId\": \"bad\u0000\"".getBytes(StandardCharsets.UTF_8);
    f.publishRaw(4, "garbage-1", garbage);
    List<Event> behind = RouterEvents.changeWithTasks(p, "c-behind", 1);
    f.publish(behind);
    long last = 1 + behind.size();

    long started = System.nanoTime();
    runOnce(4);
    java.time.Instant tick = java.time.Instant.parse("2026-12-02T10:00:00Z");
    // A sweep tick of the stream that runs the archiver and the analytics.
    for (SweepTick t = f.router.sweepTick(tick).tick();
        t.streamIndex() != 4 || !t.runsAnalytics();
        t = f.router.sweepTick(tick).tick()) {
      tick = tick.plusSeconds(60);
    }
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));

    assertThat(applied(p)).isEqualTo(behind.size());
    assertThat(routed)
        .extracting(Event::eventId)
        .containsExactlyElementsOf(behind.stream().map(Event::eventId).toList());
    String decodeError =
        assertThatThrownBy(() -> f.codec.decodeEvent(garbage))
            .isInstanceOf(org.rhumbatron.protocol.EnvelopeException.class)
            .actual()
            .getMessage();
    for (Subscription s :
        List.of(
            Subscription.PROJECT_VIEW_PROJECTOR,
            Subscription.CAUSAL_ROUTER,
            Subscription.ANALYTICS_PROJECTOR)) {
      List<String> row =
          f
              .database
              .read(
                  tx ->
                      tx.query(
                          "SELECT reason, delivery_count, command FROM dead_letters"
                              + " WHERE command_id LIKE ?",
                          rs -> List.of(rs.getString(1), rs.getString(2), rs.getString(3)),
                          "batch:" + s.durableName() + ":%"))
              .stream()
              .collect(
                  java.util.stream.Collectors.collectingAndThen(
                      java.util.stream.Collectors.toList(),
                      rows -> {
                        assertThat(rows).as(s.durableName()).hasSize(1);
                        return rows.get(0);
                      }));
      assertThat(row.get(0))
          .as(s.durableName() + " names the decode error")
          .isEqualTo("malformed envelope at stream sequence 1 (garbage-1): " + decodeError);
      assertThat(row.get(1)).as("tried once").isEqualTo("1");
      com.fasterxml.jackson.databind.JsonNode record =
          new ObjectMapper().readTree(row.get(2)).get("records").get(0);
      assertThat(record.get("streamSequence").asLong()).isEqualTo(1);
      assertThat(record.get("decodeError").asText()).isEqualTo(decodeError);
      assertThat(record.get("data").asText())
          .as("the raw bytes")
          .isEqualTo(new String(garbage, StandardCharsets.UTF_8));
      io.nats.client.api.ConsumerInfo c =
          f.connection
              .jetStreamManagement()
              .getConsumerInfo(EventStreams.streamName(4), s.durableName());
      assertThat(c.getAckFloor().getStreamSequence())
          .as(s.durableName() + " acked the stream up to its end")
          .isEqualTo(last);
      assertThat(c.getNumAckPending()).as(s.durableName() + " holds nothing back").isZero();
      assertThat(c.getRedelivered()).isZero();
    }
    assertThat(f.count("SELECT COUNT(*) FROM k2_batch_failures")).as("nothing counted").isZero();
    io.nats.client.api.ConsumerInfo archiver =
        f.connection
            .jetStreamManagement()
            .getConsumerInfo(EventStreams.streamName(4), Subscription.AUDIT_ARCHIVER.durableName());
    assertThat(archiver.getAckFloor().getStreamSequence())
        .as("the archiver keeps the malformed record in the archive and acks it")
        .isEqualTo(last);
  }

  @DatabaseTest
  void theApplyDeltaCapDefersProjectsToTheNextDelivery() throws Exception {
    fixture(Map.of());
    List<String> projects = RouterEvents.projectsOnStream(3, 20, "p-cap");
    List<Event> events = new ArrayList<>();
    for (String p : projects) {
      events.add(RouterEvents.event(p, "c-" + p, null, EventType.CHANGE_CREATED, null));
    }
    f.publish(events);

    runOnce(3);
    assertThat(f.count("SELECT COUNT(*) FROM project_views")).isEqualTo(15);
    assertThat(f.count("SELECT COUNT(*) FROM k2_batch_failures"))
        .as("a deferral is not a failure")
        .isZero();

    runOnce(3);
    assertThat(f.count("SELECT COUNT(*) FROM project_views")).isEqualTo(20);
    assertThat(f.count("SELECT SUM(events_applied) FROM project_views")).isEqualTo(20);
  }

  @DatabaseTest
  void aConsumerDeletedUnderTheRouterIsMadeAgainByItsStreamsSweep() throws Exception {
    fixture(Map.of());
    int stream = 3;
    String p = RouterEvents.projectsOnStream(stream, 1, "p-deleted").get(0);
    f.publish(List.of(RouterEvents.event(p, "c-" + p, null, EventType.CHANGE_CREATED, null)));
    runOnce(stream);
    assertThat(applied(p)).isEqualTo(1);
    f.connection
        .jetStreamManagement()
        .deleteConsumer(
            EventStreams.streamName(stream), Subscription.PROJECT_VIEW_PROJECTOR.durableName());
    f.publish(List.of(RouterEvents.event(p, "c-" + p, "t-1", EventType.TASK_READY, null)));
    runOnce(stream);
    assertThat(applied(p)).as("a nudge reads the deleted consumer as empty").isEqualTo(1);

    java.time.Instant tick = java.time.Instant.parse("2026-12-02T10:00:00Z");
    while (f.router.sweepTick(tick).tick().streamIndex() != stream) {
      tick = tick.plusSeconds(60);
    }
    // The new consumer replays the stream from its first event; the claim skips the applied one.
    assertThat(applied(p)).isEqualTo(2);
    assertThat(f.count("SELECT COUNT(*) FROM project_events WHERE project_id = ?", p)).isEqualTo(2);
  }

  @DatabaseTest
  void aBurstOfNudgesCoalescesAndLosesNone() throws Exception {
    fixture(Map.of());
    List<Event> events = RouterEvents.changeWithTasks("p-burst", "c-burst", 20);
    int stream = EventStreams.streamIndex("p-burst");
    f.publish(events);
    for (int i = 0; i < 1_000; i++) {
      f.router.nudge(stream);
    }
    f.router.drained(stream).join();
    assertThat(applied("p-burst")).isEqualTo(41);
    assertThat(f.router.nudgeRuns()).isBetween(1L, 999L);
  }

  @DatabaseTest
  void eightSweepTicksVisitEveryStreamOnceWithTheSweepsOwnBatches() throws Exception {
    fixture(Map.of());
    List<Event> events = new ArrayList<>();
    for (int s = 0; s < EventStreams.STREAM_COUNT; s++) {
      String p = RouterEvents.projectsOnStream(s, 1, "p-sweep").get(0);
      events.add(RouterEvents.event(p, "c-" + p, null, EventType.CHANGE_CREATED, null));
    }
    f.publish(events);
    java.util.Set<Integer> swept = new java.util.TreeSet<>();
    java.time.Instant tick = java.time.Instant.parse("2026-12-02T10:00:00Z");
    int analyticsTicks = 0;
    for (int i = 0; i < 8; i++) {
      EventRouter.SweepReport report = f.router.sweepTick(tick.plusSeconds(60L * i));
      swept.add(report.tick().streamIndex());
      analyticsTicks += report.tick().runsAnalytics() ? 1 : 0;
      assertThat(report.maintenance()).hasSize(report.tick().releaseSweep() ? 1 : 0);
    }
    assertThat(swept).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
    assertThat(f.count("SELECT COUNT(*) FROM project_views")).isEqualTo(8);
    assertThat(f.bucket.list("events/")).as("one archive object per stream").hasSize(8);
    // 10:00..10:07 holds one release sweep tick (10:04): the other 7 run analytics.
    assertThat(analyticsTicks).isEqualTo(7);
    assertThat(f.count("SELECT COUNT(*) FROM platform_metrics WHERE binding = 'EVENT_METRICS'"))
        .isEqualTo(7);
  }
}
