package org.rhumbatron.checker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsMessage;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.bucket.DirectoryBucket;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * The checker on a history broken on purpose: an Event committed and never on a stream, a Task
 * completed twice (two Events for one attempt), and a Change left open. Each is reported by id.
 */
class HistoryCheckerTest {
  private static final String PROJECT = "p-hist";
  private static final String TASK = "chg_stuck:t01";
  private static final String DONE_1 = "evt_" + "1".repeat(32);
  private static final String DONE_2 = "evt_" + "2".repeat(32);
  private static final String LOST = "evt_" + "3".repeat(32);
  private static final Instant AT = Instant.parse("2026-12-04T00:00:00Z");

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @TempDir Path dir;

  private final EnvelopeCodec codec = new EnvelopeCodec();

  @Test
  void aLostEventADuplicateEffectAndAStuckChangeAreReportedWithTheirIds() throws Exception {
    try (Connection connection = JetStreamConnections.connect(nats.url(), "history-test");
        Database db = Database.open(dir.resolve("history.db").toString())) {
      new JetStreamTopology(connection.jetStreamManagement(), Settings.defaults()).ensure();
      JetStream js = connection.jetStream();
      Event first = completed(DONE_1);
      Event second = completed(DONE_2);
      Event lost = completed(LOST);
      publish(js, first);
      js.publish( // a filler core wrote after a lost tail: neither an event nor a stranger
          NatsMessage.builder()
              .subject(EventStreams.streamSubject(EventStreams.streamIndex(PROJECT)))
              .headers(new Headers().put(org.rhumbatron.protocol.Headers.FILLER, "true"))
              .data(new byte[0])
              .build());
      publish(js, second);
      db.inTransaction(
          tx -> {
            tx.update(
                "INSERT INTO projects (project_id, tenant_id, name, created_at_ms, updated_at_ms)"
                    + " VALUES (?, 't', 'n', 0, 0)",
                PROJECT);
            tx.update(
                "INSERT INTO changes (change_id, project_id, client_request_id, state,"
                    + " created_at_ms, updated_at_ms, last_activity_at_ms)"
                    + " VALUES ('chg_stuck', ?, 'req-stuck', 'open', 0, 0, 0),"
                    + " ('chg_done', ?, 'req-done', 'completed', 0, 0, 0)",
                PROJECT,
                PROJECT);
            for (Event e : List.of(first, second, lost)) {
              published(tx, e);
              claimedByAll(tx, e);
            }
            return null;
          });

      CheckReport report =
          new HistoryChecker(db, connection.jetStreamManagement())
              .check(
                  new HistoryChecker.Run(
                      Map.of("req-stuck", Set.of("chg_stuck")),
                      List.of(),
                      Set.of(),
                      List.of(),
                      List.of(),
                      null));

      assertThat(report.passed()).isFalse();
      assertThat(report.ids(HistoryChecker.EVENTS_LOST)).containsExactly(LOST + " (published)");
      assertThat(report.ids(HistoryChecker.TASK_COMPLETED_TWICE))
          .singleElement()
          .asString()
          .contains(TASK, DONE_1, DONE_2)
          .doesNotContain(LOST);
      assertThat(report.ids(HistoryChecker.CHANGES_NOT_ENDED))
          .containsExactly("chg_stuck (open; no tasks; dead letters 0)");
      assertThat(report.count(HistoryChecker.EVENTS_PUBLISHED_TWICE)).isZero();
      assertThat(report.count(HistoryChecker.SECOND_CHANGE_FOR_REQUEST)).isZero();
      assertThat(report.toTable()).contains("FAILED", LOST, "chg_stuck");
      assertThat(report.totals().get("stream_fillers")).isEqualTo(1L);
      assertThat(report.toTable()).doesNotContain("undecodable");
    }
  }

  /**
   * The archiver stopped reading (broken on purpose: its last Event is in no archive object) and
   * the analytics did not claim it either: after the settle both are violations naming the Event,
   * not a count of Events behind.
   */
  @Test
  void anEventTheArchiverOrTheAnalyticsNeverAppliedIsAViolation() throws Exception {
    try (Connection connection = JetStreamConnections.connect(nats.url(), "history-test");
        Database db = Database.open(dir.resolve("history.db").toString())) {
      new JetStreamTopology(connection.jetStreamManagement(), Settings.defaults()).ensure();
      JetStream js = connection.jetStream();
      List<Event> events = List.of(completed(DONE_1), completed(DONE_2), completed(LOST));
      for (Event e : events) {
        publish(js, e);
      }
      db.inTransaction(
          tx -> {
            for (Event e : events) {
              published(tx, e);
              for (Subscription s : HistoryChecker.CLAIMING) {
                if (s != Subscription.ANALYTICS_PROJECTOR || !e.eventId().equals(LOST)) {
                  tx.update(
                      "INSERT INTO processed_events (consumer, event_id, processed_at_ms)"
                          + " VALUES (?, ?, 0)",
                      s.durableName(),
                      e.eventId());
                }
              }
            }
            return null;
          });
      Path archive = dir.resolve("rhumbatron-evidence");
      Path object =
          archive.resolve(
              String.format(
                  "events/2026/12/04/stream-%02d/part-1-a.ndjson.gz",
                  EventStreams.streamIndex(PROJECT)));
      java.nio.file.Files.createDirectories(object.getParent());
      try (java.io.OutputStream out =
          new java.util.zip.GZIPOutputStream(java.nio.file.Files.newOutputStream(object))) {
        for (Event e : events.subList(0, 2)) {
          out.write(codec.encodeEvent(e));
          out.write('\n');
        }
      }

      CheckReport report =
          new HistoryChecker(db, connection.jetStreamManagement())
              .check(
                  new HistoryChecker.Run(
                      Map.of(),
                      List.of(),
                      Set.of(),
                      List.of(),
                      List.of(),
                      DirectoryBucket.open(dir, Bucket.EVIDENCE, Clock.systemUTC())));

      assertThat(report.passed()).isFalse();
      assertThat(report.ids(HistoryChecker.APPLIED_NEVER + "audit-archiver")).containsExactly(LOST);
      assertThat(report.ids(HistoryChecker.APPLIED_NEVER + "analytics-projector"))
          .containsExactly(LOST);
      assertThat(report.count(HistoryChecker.APPLIED_NEVER + "project-view-projector")).isZero();
      assertThat(report.totals().keySet()).noneMatch(k -> k.startsWith("behind."));
    }
  }

  /**
   * One Event stored twice on its stream: sent again under another message id (as after the
   * server's duplicate window), so the stream's dedup let it through. The second copy is the one
   * violation, named by the Event's id; its effect is not counted twice.
   */
  @Test
  void anEventStoredTwiceOnItsStreamIsReportedOnceByItsId() throws Exception {
    try (Connection connection = JetStreamConnections.connect(nats.url(), "history-test");
        Database db = Database.open(dir.resolve("history.db").toString())) {
      new JetStreamTopology(connection.jetStreamManagement(), Settings.defaults()).ensure();
      JetStream js = connection.jetStream();
      Event twice = completed(DONE_1);
      publish(js, twice);
      js.publish(
          NatsMessage.builder()
              .subject(EventStreams.streamSubject(EventStreams.streamIndex(PROJECT)))
              .headers(new Headers().put("Nats-Msg-Id", twice.eventId() + "-again"))
              .data(codec.encodeEvent(twice))
              .build());
      db.inTransaction(
          tx -> {
            published(tx, twice);
            claimedByAll(tx, twice);
            return null;
          });

      CheckReport report =
          new HistoryChecker(db, connection.jetStreamManagement())
              .check(
                  new HistoryChecker.Run(
                      Map.of(), List.of(), Set.of(), List.of(), List.of(), null));

      assertThat(
              connection
                  .jetStreamManagement()
                  .getStreamInfo(EventStreams.streamName(EventStreams.streamIndex(PROJECT)))
                  .getStreamState()
                  .getMsgCount())
          .isEqualTo(2);
      assertThat(report.ids(HistoryChecker.EVENTS_PUBLISHED_TWICE)).containsExactly(DONE_1);
      assertThat(report.count(HistoryChecker.EVENTS_PUBLISHED_TWICE)).isEqualTo(1);
      assertThat(report.totals()).containsEntry("events_published", 1L);
      assertThat(report.count(HistoryChecker.EVENTS_LOST)).isZero();
      assertThat(report.count(HistoryChecker.TASK_COMPLETED_TWICE)).isZero();
      assertThat(report.passed()).isFalse();
    }
  }

  /** The outbox row of {@code e}, published. */
  private void published(org.rhumbatron.platform.db.Tx tx, Event e) throws java.sql.SQLException {
    tx.update(
        "INSERT INTO outbox (actor_class, actor_id, project_id, event_id, event_type,"
            + " stream_index, subject, payload, state, next_attempt_at_ms,"
            + " created_at_ms) VALUES ('change', 'chg_stuck', ?, ?, ?, ?, ?, ?,"
            + " 'published', 0, 0)",
        PROJECT,
        e.eventId(),
        e.eventType().wireName(),
        EventStreams.streamIndex(PROJECT),
        EventStreams.streamSubject(EventStreams.streamIndex(PROJECT)),
        codec.encodeEvent(e));
  }

  /** The claims of {@code e} by every claiming consumer. */
  private static void claimedByAll(org.rhumbatron.platform.db.Tx tx, Event e)
      throws java.sql.SQLException {
    for (Subscription s : HistoryChecker.CLAIMING) {
      tx.update(
          "INSERT INTO processed_events (consumer, event_id, processed_at_ms) VALUES (?, ?, 0)",
          s.durableName(),
          e.eventId());
    }
  }

  private static Event completed(String id) {
    return new Event(
        id,
        EventType.TASK_COMPLETED,
        Event.CURRENT_VERSION,
        "t",
        PROJECT,
        "chg_stuck",
        TASK,
        "agent:a",
        null,
        null,
        null,
        "chg_stuck",
        AT,
        JsonNodeFactory.instance.objectNode().put("attempt", 1));
  }

  private void publish(JetStream js, Event e) throws Exception {
    js.publish(
        NatsMessage.builder()
            .subject(EventStreams.streamSubject(EventStreams.streamIndex(PROJECT)))
            .headers(new Headers().put("Nats-Msg-Id", e.eventId()))
            .data(codec.encodeEvent(e))
            .build());
  }
}
