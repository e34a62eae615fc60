package org.rhumbatron.coordinator.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.nats.client.JetStreamManagement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.coordinator.CoordinatorFixture;
import org.rhumbatron.coordinator.OutboxRows;
import org.rhumbatron.coordinator.StreamContents;
import org.rhumbatron.coordinator.actor.ActorAddress;
import org.rhumbatron.coordinator.project.ProjectRootActor;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.Headers;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/** The seed's outbox row states, edge by edge, on a real nats-server; run per database. */
abstract class OutboxContract {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  abstract TestDatabase db();

  private final List<CoordinatorFixture> fixtures = new ArrayList<>();
  private String projectId;

  final SettableClock clock = CoordinatorFixture.clockAt("2026-03-01T10:00:00Z");

  @AfterEach
  void closeFixtures() throws Exception {
    for (CoordinatorFixture f : fixtures) {
      f.close();
    }
  }

  CoordinatorFixture start(Settings settings) throws Exception {
    CoordinatorFixture f = CoordinatorFixture.start(db().url(), nats.url(), clock, settings);
    fixtures.add(f);
    return f;
  }

  CoordinatorFixture start() throws Exception {
    return start(Settings.defaults());
  }

  String project(TestInfo info) {
    projectId =
        "p-"
            + info.getTestMethod()
                .orElseThrow()
                .getName()
                .toLowerCase()
                .replaceAll("[^a-z0-9]", "")
                .substring(0, 12)
            + "-"
            + Integer.toHexString(System.identityHashCode(this));
    return projectId;
  }

  static List<OutboxRows.Row> rows(CoordinatorFixture f, String projectId) {
    return OutboxRows.ofProject(f.db, projectId);
  }

  static Optional<Instant> alarmOf(CoordinatorFixture f, ActorAddress a) {
    return f.db.read(tx -> f.coordinator.runtime().alarms().dueAt(tx, a));
  }

  static void deleteStreamOf(CoordinatorFixture f, String projectId) throws Exception {
    JetStreamManagement jsm = f.nats.jetStreamManagement();
    jsm.deleteStream(EventStreams.streamName(EventStreams.streamIndex(projectId)));
  }

  static void restoreTopology(CoordinatorFixture f) throws Exception {
    new JetStreamTopology(f.nats.jetStreamManagement(), f.settings).ensure();
  }

  @Test
  void pendingToPublishedOnceInOutboxOrderWithANudge(TestInfo info) throws Exception {
    CoordinatorFixture f = start();
    String p = project(info);
    assertThat(f.coordinator.root(p).createProject("tenant-1", "Demo").join()).isTrue();
    assertThat(f.coordinator.root(p).createProject("tenant-1", "Demo").join()).isFalse();
    List<Event> events =
        IntStream.range(0, 250).mapToObj(i -> f.changeEvent(p, "c1", "t1", i)).toList();
    assertThat(f.coordinator.changeEvents().appendChangeEvents(p, "c1", events).join())
        .isEqualTo(250);
    // A retried step writes the same stable ids again: the outbox ignores the repeat.
    assertThat(
            f.coordinator.changeEvents().appendChangeEvents(p, "c1", events.subList(0, 10)).join())
        .isZero();

    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> rows(f, p).stream().allMatch(r -> r.state().equals("published")));
    List<String> onStream = StreamContents.eventIdsOf(f.nats, p);
    assertThat(onStream).hasSize(251).doesNotHaveDuplicates();
    assertThat(onStream.subList(1, 251))
        .containsExactlyElementsOf(events.stream().map(Event::eventId).toList());
    assertThat(rows(f, p)).allSatisfy(r -> assertThat(r.streamSeq()).isNotNull());
    assertThat(f.nudges).contains(EventStreams.streamIndex(p));
    // Each message names its outbox row: readers order one writer's Events by it.
    String stream = EventStreams.streamName(EventStreams.streamIndex(p));
    for (OutboxRows.Row r : rows(f, p)) {
      assertThat(
              f.nats
                  .jetStreamManagement()
                  .getMessage(stream, r.streamSeq())
                  .getHeaders()
                  .getFirst(Headers.OUTBOX_SEQ))
          .isEqualTo(Long.toString(r.seq()));
    }
  }

  @Test
  void failedSendsWaitWithBackoffAndTheTenthAttemptFails(TestInfo info) throws Exception {
    CoordinatorFixture f = start();
    String p = project(info);
    deleteStreamOf(f, p); // a real send failure: no stream listens on the subject
    f.coordinator.root(p).createProject("tenant-1", "Demo").join();
    ActorAddress root = f.coordinator.root(p).address();

    long[] expectedDelays = {1, 2, 4, 8, 16, 32, 64, 128, 256};
    await().until(() -> rows(f, p).get(0).state().equals("retry_wait"));
    for (int attempt = 1; attempt <= 9; attempt++) {
      OutboxRows.Row row = rows(f, p).get(0);
      assertThat(row.state()).isEqualTo("retry_wait");
      assertThat(row.attempts()).isEqualTo(attempt);
      assertThat(row.nextAttemptAtMs() - clock.millis())
          .as("backoff after attempt %d", attempt)
          .isEqualTo(expectedDelays[attempt - 1] * 1000);
      assertThat(row.lastError()).isNotBlank();
      assertThat(alarmOf(f, root)).contains(Instant.ofEpochMilli(row.nextAttemptAtMs()));
      clock.set(Instant.ofEpochMilli(row.nextAttemptAtMs() - 1));
      assertThat(f.coordinator.runtime().fireDueAlarms()).as("not due 1 ms early").isZero();
      clock.set(Instant.ofEpochMilli(row.nextAttemptAtMs()));
      assertThat(f.coordinator.runtime().fireDueAlarms()).isEqualTo(1);
    }
    OutboxRows.Row last = rows(f, p).get(0);
    assertThat(last.state()).isEqualTo("failed");
    assertThat(last.attempts()).isEqualTo(10);
    assertThat(last.lastError()).isNotBlank();
    assertThat(alarmOf(f, root)).as("no due work: AlarmGuard deleted the alarm").isEmpty();
  }

  @Test
  void theBackoffIsCappedAtFiveMinutes(TestInfo info) throws Exception {
    CoordinatorFixture f = start(Settings.defaults().with(Settings.OUTBOX_MAX_ATTEMPTS, 12));
    String p = project(info);
    deleteStreamOf(f, p);
    f.coordinator.root(p).createProject("tenant-1", "Demo").join();
    await().until(() -> rows(f, p).get(0).state().equals("retry_wait"));
    List<Long> delays = new ArrayList<>();
    for (int attempt = 1; attempt <= 11; attempt++) {
      OutboxRows.Row row = rows(f, p).get(0);
      delays.add((row.nextAttemptAtMs() - clock.millis()) / 1000);
      clock.set(Instant.ofEpochMilli(row.nextAttemptAtMs()));
      f.coordinator.runtime().fireDueAlarms();
    }
    assertThat(delays).containsExactly(1L, 2L, 4L, 8L, 16L, 32L, 64L, 128L, 256L, 300L, 300L);
    assertThat(rows(f, p).get(0).state()).isEqualTo("failed");
  }

  @Test
  void retryWaitGoesBackToPendingAndPublishesInOrderWhenTheStreamIsBack(TestInfo info)
      throws Exception {
    CoordinatorFixture f = start();
    String p = project(info);
    deleteStreamOf(f, p);
    f.coordinator.root(p).createProject("tenant-1", "Demo").join();
    await().until(() -> rows(f, p).get(0).state().equals("retry_wait"));
    // Later Events of the same outbox wait behind the row in retry_wait.
    ProjectRootActor root = f.coordinator.root(p);
    root.advanceCanonical(0, "cand-1", "c1").join();
    root.advanceCanonical(1, "cand-2", "c1").join();
    assertThat(rows(f, p))
        .extracting(OutboxRows.Row::state)
        .containsExactly("retry_wait", "pending", "pending", "pending", "pending");

    restoreTopology(f);
    clock.advance(Duration.ofSeconds(1));
    assertThat(f.coordinator.runtime().fireDueAlarms()).isEqualTo(1);
    await().until(() -> rows(f, p).stream().allMatch(r -> r.state().equals("published")));
    List<Event> onStream = StreamContents.eventsOf(f.nats, p);
    assertThat(onStream)
        .extracting(e -> e.eventType().wireName())
        .containsExactly(
            "project.created",
            "artifact.promoted",
            "canonical.advanced",
            "artifact.promoted",
            "canonical.advanced");
    assertThat(onStream).extracting(Event::canonicalGeneration).containsExactly(0L, 1L, 1L, 2L, 2L);
  }

  @Test
  void aStreamWithoutAProducerBindingFailsItsRowsAtOnce(TestInfo info) throws Exception {
    String p = project(info);
    int stream = EventStreams.streamIndex(p);
    Set<Integer> bound = new java.util.TreeSet<>(IntStream.range(0, 8).boxed().toList());
    bound.remove(stream);
    CoordinatorFixture f =
        CoordinatorFixture.startBound(db().url(), nats.url(), clock, Settings.defaults(), bound);
    fixtures.add(f);
    f.coordinator.root(p).createProject("tenant-1", "Demo").join();
    await().until(() -> rows(f, p).get(0).state().equals("failed"));
    OutboxRows.Row row = rows(f, p).get(0);
    assertThat(row.lastError())
        .isEqualTo("no producer binding for stream " + EventStreams.streamName(stream));
    assertThat(StreamContents.eventIdsOf(f.nats, p)).isEmpty();
  }

  @Test
  void alarmGuardCapsFiresPerUtcDayAndTheAlarmSurvivesARestart(TestInfo info) throws Exception {
    Settings capped = Settings.defaults().with(Settings.ALARM_FIRES_PER_DAY, 3);
    clock.set(Instant.parse("2026-03-01T23:50:00Z"));
    CoordinatorFixture f = start(capped);
    String p = project(info);
    deleteStreamOf(f, p);
    f.coordinator.root(p).createProject("tenant-1", "Demo").join();
    ActorAddress root = f.coordinator.root(p).address();
    await().until(() -> rows(f, p).get(0).state().equals("retry_wait"));
    for (int fire = 1; fire <= 3; fire++) {
      clock.set(Instant.ofEpochMilli(rows(f, p).get(0).nextAttemptAtMs()));
      assertThat(f.coordinator.runtime().fireDueAlarms()).isEqualTo(1);
    }
    clock.set(Instant.ofEpochMilli(rows(f, p).get(0).nextAttemptAtMs()));
    assertThat(f.coordinator.runtime().fireDueAlarms())
        .as("4th fire of the day is capped")
        .isZero();
    assertThat(f.coordinator.runtime().guard().cappedCount()).isEqualTo(1);
    assertThat(alarmOf(f, root)).contains(Instant.parse("2026-03-02T00:00:00Z"));

    // Restart: a new coordinator on the same database finds the alarm and fires it next day.
    f.close();
    fixtures.remove(f);
    CoordinatorFixture g = start(capped);
    restoreTopology(g);
    clock.set(Instant.parse("2026-03-02T00:00:00Z"));
    assertThat(g.coordinator.runtime().fireDueAlarms()).isEqualTo(1);
    await().until(() -> rows(g, p).get(0).state().equals("published"));
    assertThat(StreamContents.eventIdsOf(g.nats, p)).hasSize(1);
    assertThat(alarmOf(g, root)).as("nothing due: the alarm is deleted").isEmpty();
  }

  @Test
  void aCommitArmsTheBackstopAlarmAndAFireWithNoDueWorkDeletesIt(TestInfo info) throws Exception {
    CoordinatorFixture f = start();
    String p = project(info);
    f.coordinator.root(p).createProject("tenant-1", "Demo").join();
    ActorAddress root = f.coordinator.root(p).address();
    assertThat(alarmOf(f, root))
        .contains(clock.instant().plus(Settings.defaults().get(Settings.OUTBOX_ALARM_BACKSTOP)));
    await().until(() -> rows(f, p).get(0).state().equals("published"));
    clock.advance(Duration.ofMinutes(1));
    assertThat(f.coordinator.runtime().fireDueAlarms()).isEqualTo(1);
    assertThat(alarmOf(f, root)).isEmpty();
    assertThat(f.coordinator.runtime().alarmsDeleted()).isEqualTo(1);
  }

  @Test
  void idleActorsUnloadAndComeBackOnDemand(TestInfo info) throws Exception {
    CoordinatorFixture f = start();
    String p = project(info);
    ProjectRootActor first = f.coordinator.root(p);
    first.createProject("tenant-1", "Demo").join();
    clock.advance(Duration.ofMinutes(10));
    // The lane turns idle a moment after the future completes.
    await()
        .until(
            () -> {
              f.coordinator.runtime().unloadIdle(Duration.ofMinutes(5));
              return !f.coordinator.runtime().isLoaded(first.address());
            });
    ProjectRootActor again = f.coordinator.root(p);
    assertThat(again).isNotSameAs(first);
    assertThat(again.advanceCanonical(0, "cand-1", "c1").join()).isEqualTo(1L);
    assertThat(again.advanceCanonical(0, "cand-1", "c1").join()).as("stale base").isEqualTo(-1L);
  }

  @Test
  void theJanitorDeletesOnlyPublishedRowsPastTheHorizon(TestInfo info) throws Exception {
    CoordinatorFixture f = start();
    String p = project(info);
    f.coordinator.root(p).createProject("tenant-1", "Demo").join();
    await().until(() -> rows(f, p).get(0).state().equals("published"));
    f.coordinator.root(p).advanceCanonical(0, "cand-1", "c1").join();
    await().until(() -> rows(f, p).stream().allMatch(r -> r.state().equals("published")));
    clock.advance(Settings.defaults().get(Settings.OUTBOX_KEEP_PUBLISHED).minusSeconds(1));
    assertThat(f.coordinator.janitor().purgePublished()).as("inside the horizon").isZero();
    clock.advance(Duration.ofSeconds(2));
    long newest = count(f, "SELECT MAX(seq) FROM outbox");
    assertThat(f.coordinator.janitor().purgePublished()).as("all but the newest").isEqualTo(2);
    assertThat(count(f, "SELECT COUNT(*) FROM outbox")).isEqualTo(1);

    // The project view orders an item's Events by outbox seq: a new row must not get a lower one.
    f.coordinator.root(p).advanceCanonical(1, "cand-2", "c2").join();
    assertThat(count(f, "SELECT MIN(seq) FROM outbox WHERE seq <> " + newest))
        .isGreaterThan(newest);
  }

  @Test
  void oneJanitorRunDeletesEveryPublishedRowPastTheHorizonNotOneBatch() throws Exception {
    CoordinatorFixture f = start();
    int old = 12_345; // more than two transactions of 5,000
    long publishedAt = clock.millis();
    for (String[] r : new String[][] {{"pub", "published"}, {"failed", "failed"}}) {
      f.db.inTransaction(
          tx ->
              tx.update(
                  "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < "
                      + (r[1].equals("published") ? old : 3)
                      + ") INSERT INTO outbox (actor_class, actor_id, project_id, event_id,"
                      + " event_type, stream_index, subject, payload, state, next_attempt_at_ms,"
                      + " published_at_ms, created_at_ms) SELECT 'root', 'p', 'p', '"
                      + r[0]
                      + "-' || i, 'task.completed', 0, 'events.00', ?, '"
                      + r[1]
                      + "', 0, ?, 0 FROM n",
                  new byte[] {1},
                  publishedAt));
    }
    clock.advance(Settings.defaults().get(Settings.OUTBOX_KEEP_PUBLISHED).plusSeconds(1));

    assertThat(f.coordinator.janitor().purgePublished()).isEqualTo(old);
    assertThat(count(f, "SELECT COUNT(*) FROM outbox WHERE state = 'failed'"))
        .as("a failed row stays for its operator")
        .isEqualTo(3);
    assertThat(count(f, "SELECT COUNT(*) FROM outbox")).isEqualTo(3);
  }

  private static long count(CoordinatorFixture f, String sql) {
    return f.db.read(tx -> tx.queryLong(sql));
  }
}
