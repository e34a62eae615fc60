package org.rhumbatron.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.bucket.BucketObject;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.router.run.BatchOutcome;
import org.rhumbatron.router.run.SubscriptionHandler;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * The archiver and analytics keep up: beyond the sweep's one batch per tick, core reads further
 * batches of a stream that is behind, after the nudges. No test here runs a sweep tick.
 */
class CatchUpTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration BOUND = Duration.ofSeconds(20);

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  @TempDir Path dataDir;

  private RouterFixture f;

  private RouterFixture fixture(
      Map<String, String> overrides, UnaryOperator<SubscriptionHandler> archiver) throws Exception {
    f = new RouterFixture(nats.url(), db().url(), dataDir, overrides, archiver);
    return f;
  }

  @AfterEach
  void close() throws Exception {
    if (f != null) {
      f.close();
    }
  }

  /**
   * Two streams at 120 Events a second each for 10 s (the seed's sweep alone reads 12.5 a minute
   * per stream), no sweep tick and no nudge: the unread stay bounded while they come, and within
   * the bound after the last one the archive holds each Event once, in stream order per object, and
   * platform_metrics one point per lifecycle Event.
   */
  @DatabaseTest
  void aSteadyRateIsArchivedAndCountedWithinTheBoundWithoutASweepTick() throws Exception {
    fixture(
        Map.of("router.catch-up-check-every", "200ms", "router.catch-up-after", "0s"),
        archiver -> archiver);
    int[] streams = {2, 5};
    Map<Integer, List<Event>> byStream = new HashMap<>();
    List<Event> all = new ArrayList<>();
    List<Event> lifecycle = new ArrayList<>();
    for (int s : streams) {
      String project = RouterEvents.projectsOnStream(s, 1, "p-steady").get(0);
      List<Event> events = new ArrayList<>();
      for (int c = 0; events.size() < 1_200; c++) {
        List<Event> change = RouterEvents.changeWithTasks(project, "c-" + s + "-" + c, 4);
        events.addAll(change);
        lifecycle.addAll(change);
        // A resource Event: archived, but no analytics point.
        events.add(intent(project, "c-" + s + "-" + c));
      }
      byStream.put(s, events);
    }
    int perStream = byStream.get(streams[0]).size();
    for (int i = 0; i < perStream; i++) {
      for (int s : streams) {
        all.add(byStream.get(s).get(i));
      }
    }
    f.router.startCatchUp();

    long maxUnread = 0;
    long start = System.nanoTime();
    int perSecond = 2 * 120;
    for (int sent = 0; sent < all.size(); ) {
      long due = Math.min(all.size(), (System.nanoTime() - start) / 1_000_000 * perSecond / 1_000);
      if (sent < due) {
        f.publish(all.subList(sent, (int) due));
        sent = (int) due;
      } else {
        Thread.sleep(10); // the publish rate's pace, not a wait for an outcome
      }
      for (int s : streams) {
        for (Subscription sub :
            List.of(Subscription.AUDIT_ARCHIVER, Subscription.ANALYTICS_PROJECTOR)) {
          maxUnread = Math.max(maxUnread, f.router.lags().unread(s, sub));
        }
      }
    }
    assertThat(maxUnread).as("unread at most while the Events come").isLessThan(500);

    await()
        .atMost(BOUND)
        .until(() -> archived().size() == all.size() && points() == lifecycle.size());
    for (int s : streams) {
      assertArchivedOnceInStreamOrder(s, byStream.get(s));
    }
    Map<String, Long> perEvent = new HashMap<>();
    f.database
        .read(
            tx ->
                tx.query(
                    "SELECT event_id FROM platform_metrics WHERE binding = 'EVENT_METRICS'",
                    rs -> rs.getString(1)))
        .forEach(id -> perEvent.merge(id, 1L, Long::sum));
    assertThat(perEvent.keySet())
        .containsExactlyInAnyOrderElementsOf(lifecycle.stream().map(Event::eventId).toList());
    assertThat(perEvent.values()).allMatch(n -> n == 1);
    assertThat(f.router.catchUpBatches()).isPositive();
  }

  /**
   * A nudge while a catch-up batch runs does not wait for it: the causal-router (nudged) routes its
   * Events while the archiver's batch is still held.
   */
  @DatabaseTest
  void aNudgeDuringACatchUpBatchIsRoutedWithoutWaitingForIt() throws Exception {
    CountDownLatch firstBatchStarted = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    fixture(
        Map.of(),
        archiver ->
            new SubscriptionHandler() {
              @Override
              public Subscription subscription() {
                return archiver.subscription();
              }

              @Override
              public BatchOutcome handle(int streamIndex, List<EventRecord> records) {
                if (firstBatchStarted.getCount() > 0) {
                  firstBatchStarted.countDown();
                  try {
                    release.await(20, TimeUnit.SECONDS);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                }
                return archiver.handle(streamIndex, records);
              }
            });
    List<String> routed = new CopyOnWriteArrayList<>();
    f.causalRules = (tx, fresh) -> fresh.forEach(e -> routed.add(e.eventId()));
    int stream = 6;
    String project = RouterEvents.projectsOnStream(stream, 1, "p-first").get(0);
    List<Event> events = new ArrayList<>();
    for (int c = 0; events.size() < 500; c++) {
      events.addAll(RouterEvents.changeWithTasks(project, "c-first-" + c, 4));
    }
    f.publish(events);

    try {
      f.router.catchUp(stream);
      assertThat(firstBatchStarted.await(20, TimeUnit.SECONDS)).isTrue();
      f.router.nudge(stream);
      await().atMost(BOUND).untilAsserted(() -> assertThat(routed).isNotEmpty());
      assertThat(release.getCount()).as("the archiver's batch is still held").isOne();
    } finally {
      release.countDown();
    }
    await().atMost(BOUND).until(() -> archived().size() == events.size());
  }

  /**
   * Nudges without a pause do not starve the catch-up: it gives way to one nudge, then reads as
   * much as a nudge run does before it gives way again. Here every nudge run publishes an Event and
   * queues the next nudge, as a busy stream's publisher does, so a nudge is always queued.
   */
  @DatabaseTest
  void nudgesWithoutAPauseDoNotStarveTheCatchUp() throws Exception {
    fixture(Map.of(), archiver -> archiver);
    int stream = 7;
    String project = RouterEvents.projectsOnStream(stream, 1, "p-busy").get(0);
    List<Event> events = new ArrayList<>();
    for (int c = 0; events.size() < 1_000; c++) {
      events.addAll(RouterEvents.changeWithTasks(project, "c-busy-" + c, 4));
    }
    f.publish(events);
    java.util.concurrent.atomic.AtomicBoolean busy =
        new java.util.concurrent.atomic.AtomicBoolean(true);
    java.util.concurrent.atomic.AtomicInteger more =
        new java.util.concurrent.atomic.AtomicInteger();
    f.causalRules =
        (tx, fresh) -> {
          if (busy.get()) {
            try {
              f.publish(
                  List.of(
                      RouterEvents.event(
                          project,
                          "c-more-" + more.incrementAndGet(),
                          null,
                          EventType.CHANGE_CREATED,
                          null)));
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
            f.router.nudge(stream);
          }
        };
    f.router.nudge(stream);
    f.router.catchUp(stream);
    try {
      await()
          .atMost(BOUND)
          .until(() -> archived().containsAll(events.stream().map(Event::eventId).toList()));
    } finally {
      busy.set(false);
    }
    assertThat(more.get()).as("the nudges ran meanwhile").isGreaterThan(5);
  }

  /**
   * A quiet stream's few Events wait for {@code router.catch-up-after} (the archive stays in
   * batches, not an object per Event), and the age of its oldest unread Event is the metric.
   */
  @DatabaseTest
  void aQuietStreamIsReadOnceItsOldestUnreadEventIsCatchUpAfterOld() throws Exception {
    fixture(Map.of("router.catch-up-check-every", "100ms"), archiver -> archiver);
    int stream = 1;
    String project = RouterEvents.projectsOnStream(stream, 1, "p-quiet").get(0);
    List<Event> events = RouterEvents.changeWithTasks(project, "c-quiet", 2);
    f.publish(events);
    // The age counts from when the server stored the Event: what the stream's max age drops by.
    Instant written = firstStoredAt(stream);
    f.clock.set(written.plusSeconds(10));
    f.router.startCatchUp();

    await()
        .atMost(BOUND)
        .until(() -> f.router.lags().unread(stream, Subscription.AUDIT_ARCHIVER) == 5);
    assertThat(f.router.lags().oldestUnreadAgeSeconds(stream, Subscription.AUDIT_ARCHIVER))
        .isEqualTo(10.0);
    assertThat(f.router.lags().oldestUnreadAgeSeconds(stream, Subscription.ANALYTICS_PROJECTOR))
        .isEqualTo(10.0);
    assertThat(f.router.lags().oldestUnreadAgeSeconds(0, Subscription.AUDIT_ARCHIVER))
        .as("an empty stream")
        .isZero();
    assertThat(f.router.catchUpBatches()).isZero();
    assertThat(archived()).isEmpty();

    f.clock.set(written.plusSeconds(30));
    await().atMost(BOUND).until(() -> archived().size() == 5 && points() == 5);
    assertThat(f.bucket.list("events/")).as("one object for the five").hasSize(1);
    await()
        .atMost(BOUND)
        .until(
            () ->
                f.router.lags().oldestUnreadAgeSeconds(stream, Subscription.AUDIT_ARCHIVER) == 0
                    && f.router
                            .lags()
                            .oldestUnreadAgeSeconds(stream, Subscription.ANALYTICS_PROJECTOR)
                        == 0);
  }

  /**
   * A projector delivery whose ack was lost (a connection cut): without a publish the stream gets
   * no nudge and its sweep comes up to 8 minutes later. The sampler sees the projector's unread
   * Event and nudges the stream, so it is read again once the ack wait has passed.
   */
  @DatabaseTest
  void aDeliveryWhoseAckWasLostIsReadAgainWithoutAPublishOrASweep() throws Exception {
    fixture(
        Map.of("router.catch-up-check-every", "100ms", "router.ack-wait", "1s"),
        archiver -> archiver);
    int stream = 2;
    String project = RouterEvents.projectsOnStream(stream, 1, "p-lost-ack").get(0);
    List<Event> events = RouterEvents.changeWithTasks(project, "c-lost-ack", 2);
    f.publish(events);
    // Delivered to the projector and never acked, as when the ack went down with the connection.
    List<EventRecord> delivered =
        f.eventLog.fetch(stream, Subscription.PROJECT_VIEW_PROJECTOR, events.size());
    assertThat(delivered).hasSize(events.size());
    Instant written = firstStoredAt(stream);
    f.clock.set(written.plusSeconds(31));
    f.router.startCatchUp();

    await()
        .atMost(BOUND)
        .until(
            () ->
                f.count(
                        "SELECT COUNT(*) FROM processed_events WHERE consumer = ?",
                        Subscription.PROJECT_VIEW_PROJECTOR.durableName())
                    == events.size());
  }

  /** When the server stored the stream's first message. */
  private Instant firstStoredAt(int stream) throws Exception {
    return f.connection
        .jetStreamManagement()
        .getMessage(EventStreams.streamName(stream), 1)
        .getTime()
        .toInstant();
  }

  private static Event intent(String project, String changeId) {
    com.fasterxml.jackson.databind.node.ObjectNode payload =
        com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
    payload.put("agentId", "agent-1");
    payload.put("attempt", 1);
    return Event.builder()
        .eventId(org.rhumbatron.protocol.StableIds.randomEventId())
        .eventType(EventType.INTENT_DECLARED)
        .tenantId("tenant")
        .projectId(project)
        .changeId(changeId)
        .taskId(changeId + "-t0")
        .actor("test")
        .resource("path:src/" + changeId)
        .correlationId(changeId)
        .timestamp(Instant.parse("2026-12-02T10:00:00Z"))
        .payload(payload)
        .build();
  }

  private long points() {
    return f.count("SELECT COUNT(*) FROM platform_metrics WHERE binding = 'EVENT_METRICS'");
  }

  /** Every archived line's event id, object by object (keys in order), line by line. */
  private List<String> archived() throws Exception {
    List<String> ids = new ArrayList<>();
    for (List<String> object : objects().values()) {
      ids.addAll(object);
    }
    return ids;
  }

  private Map<String, List<String>> objects() throws Exception {
    Map<String, List<String>> out = new java.util.TreeMap<>();
    for (BucketObject o : f.bucket.list("events/")) {
      List<String> ids = new ArrayList<>();
      byte[] body = f.bucket.get(o.key()).orElseThrow();
      try (BufferedReader r =
          new BufferedReader(
              new InputStreamReader(
                  new GZIPInputStream(new ByteArrayInputStream(body)), StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          ids.add(JSON.readTree(line).path("eventId").asText());
        }
      }
      out.put(o.key(), ids);
    }
    return out;
  }

  private void assertArchivedOnceInStreamOrder(int stream, List<Event> published) throws Exception {
    Map<String, Integer> position = new HashMap<>();
    for (int i = 0; i < published.size(); i++) {
      position.put(published.get(i).eventId(), i);
    }
    List<String> seen = new ArrayList<>();
    String folder = String.format("/stream-%02d/", stream);
    for (Map.Entry<String, List<String>> o : objects().entrySet()) {
      if (!o.getKey().contains(folder)) {
        continue;
      }
      List<Integer> at = o.getValue().stream().map(position::get).toList();
      assertThat(at).as("only this stream's Events in " + o.getKey()).doesNotContainNull();
      assertThat(at).as("stream order in " + o.getKey()).isSorted().doesNotHaveDuplicates();
      assertThat(at.size()).isLessThanOrEqualTo(100);
      seen.addAll(o.getValue());
    }
    assertThat(seen)
        .as("each Event of " + EventStreams.streamName(stream) + " once")
        .hasSize(published.size())
        .containsExactlyInAnyOrderElementsOf(published.stream().map(Event::eventId).toList());
  }
}
