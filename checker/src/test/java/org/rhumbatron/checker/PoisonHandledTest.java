package org.rhumbatron.checker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nats.client.Connection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * Where each poison kind must end: a message that never decodes only at once with its decode error
 * (each claiming consumer's dead letter counts one failure; a queue's reason is the decode error),
 * any other as before. Dead letters and log lines are written here as core writes them.
 */
class PoisonHandledTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String STREAM = EventStreams.streamSubject(3);

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @TempDir Path dir;

  private Connection connection;
  private Database db;
  private final List<Poison.Sent> sent = new ArrayList<>();
  private final List<String> logLines = new ArrayList<>();

  @BeforeEach
  void open() throws Exception {
    connection = JetStreamConnections.connect(nats.url(), "poison-handled-test");
    new JetStreamTopology(connection.jetStreamManagement(), Settings.defaults()).ensure();
    db = Database.open(dir.resolve("poison.db").toString());
  }

  @AfterEach
  void close() throws Exception {
    db.close();
    connection.close();
  }

  private Poison.Sent send(String kind, String subject, String marker) {
    Poison.Sent p =
        new Poison.Sent(kind, subject, subject.equals(STREAM), marker, null, sent.size() + 1);
    sent.add(p);
    return p;
  }

  /** An event batch dead letter of {@code consumer} as {@code BatchFailures} writes it. */
  private void eventDeadLetter(
      Subscription consumer, Poison.Sent p, long failures, boolean decodeError) {
    ObjectNode d = JSON.createObjectNode().put("consumer", consumer.durableName());
    ObjectNode record = d.putArray("records").addObject();
    record.put("streamSequence", p.streamSequence()).put("messageId", p.marker());
    String reason = "handler failed";
    if (decodeError) {
      record.put("decodeError", "envelope violates rule 'json': not valid JSON");
      reason =
          "malformed envelope at stream sequence "
              + p.streamSequence()
              + " ("
              + p.marker()
              + "): envelope violates rule 'json': not valid JSON";
    }
    insert("batch:" + consumer.durableName() + ":" + p.marker(), d.toString(), reason, failures);
  }

  private void insert(String commandId, String command, String reason, long failures) {
    db.inTransaction(
        tx ->
            tx.update(
                "INSERT INTO dead_letters (command_id, kind, command, reason, delivery_count,"
                    + " created_at_ms) VALUES (?, 'event_batch', ?, ?, ?, 0)",
                commandId,
                command,
                reason,
                failures));
  }

  private void deadLetteredAtOnceByAll(Poison.Sent p) {
    for (Subscription s : HistoryChecker.CLAIMING) {
      eventDeadLetter(s, p, 1, true);
    }
  }

  private CheckReport check() throws Exception {
    Path log = dir.resolve("core.log");
    Files.write(log, logLines);
    CheckReport report = new CheckReport();
    report.expect(HistoryChecker.POISON_NOT_HANDLED);
    report.expect(HistoryChecker.MALFORMED_NOT_AT_ONCE);
    new PoisonHandled(db, connection.jetStreamManagement())
        .check(
            report,
            new HistoryChecker.Run(Map.of(), sent, Set.of(), List.of(), List.of(log), null));
    return report;
  }

  @Test
  void aMalformedEventEndsWellOnlyWhenEachConsumerDeadLetteredItAtOnceWithItsDecodeError()
      throws Exception {
    deadLetteredAtOnceByAll(send("not-json", STREAM, "poison-t-1"));
    Poison.Sent retried = send("json-array", STREAM, "poison-t-2");
    eventDeadLetter(Subscription.CAUSAL_ROUTER, retried, 1, true);
    eventDeadLetter(Subscription.PROJECT_VIEW_PROJECTOR, retried, 5, true);
    eventDeadLetter(Subscription.ANALYTICS_PROJECTOR, retried, 1, true);
    Poison.Sent unnamed = send("wrong-types", STREAM, "poison-t-3");
    eventDeadLetter(Subscription.CAUSAL_ROUTER, unnamed, 1, false);
    eventDeadLetter(Subscription.PROJECT_VIEW_PROJECTOR, unnamed, 1, true);
    eventDeadLetter(Subscription.ANALYTICS_PROJECTOR, unnamed, 1, true);
    Poison.Sent missed = send("unicode", STREAM, "poison-t-4");
    eventDeadLetter(Subscription.CAUSAL_ROUTER, missed, 1, true);
    eventDeadLetter(Subscription.PROJECT_VIEW_PROJECTOR, missed, 1, true);

    CheckReport report = check();

    assertThat(report.totals()).containsEntry("poison_event_malformed_dead_lettered_at_once", 1L);
    assertThat(report.ids(HistoryChecker.MALFORMED_NOT_AT_ONCE))
        .hasSize(2)
        .anySatisfy(id -> assertThat(id).startsWith("poison-t-2 (json-array on "))
        .anySatisfy(id -> assertThat(id).startsWith("poison-t-3 (wrong-types on "));
    assertThat(report.ids(HistoryChecker.POISON_NOT_HANDLED))
        .containsExactly("poison-t-4 (unicode on " + STREAM + ")");
  }

  @Test
  void anEventThatDecodesMayStillEndAfterItsFailures() throws Exception {
    Poison.Sent p = send("unknown-project", STREAM, "poison-t-5");
    for (Subscription s : HistoryChecker.CLAIMING) {
      eventDeadLetter(s, p, 5, false);
    }

    CheckReport report = check();

    assertThat(report.totals()).containsEntry("poison_event_claimed_or_dead_lettered", 1L);
    assertThat(report.passed()).as(report.toTable()).isTrue();
  }

  @Test
  void aMalformedCommandEndsWellOnlyWithItsDecodeErrorAsTheReason() throws Exception {
    String wakeups = Queue.AGENT_WAKEUPS.subject();
    send("huge-payload", wakeups, "poison-t-6");
    insert(
        "cmd_undecodable_6",
        "{\"marker\": \"poison-t-6\"}",
        "malformed command envelope: envelope violates rule 'maxBytes' (the original is not a"
            + " valid command: envelope violates rule 'maxBytes')",
        1);
    send("not-json", Queue.INDEXING.subject(), "poison-t-7");
    logLines.add(
        "ERROR giving up on poison-t-7 (sequence 7) of indexing after 1 handler runs (1"
            + " deliveries); the queue has no dead-letter queue, so it is terminated: malformed"
            + " command envelope: envelope violates rule 'json'");
    send("unknown-type", wakeups, "poison-t-8");
    insert("cmd_undecodable_8", "{\"marker\": \"poison-t-8\"}", "handler failed 4 times", 4);
    send("wrong-types", Queue.INDEXING.subject(), "poison-t-9");
    logLines.add("WARN handler of poison-t-9 on q-indexing finished after the hold limit");
    send("unknown-project", wakeups, "poison-t-10");
    insert("cmd_10", "{\"marker\": \"poison-t-10\"}", "no such Task", 1);

    CheckReport report = check();

    assertThat(report.totals())
        .containsEntry("poison_command_malformed_dead_lettered", 1L)
        .containsEntry("poison_command_malformed_rejected_in_log", 1L)
        .containsEntry("poison_command_dead_lettered", 1L);
    assertThat(report.ids(HistoryChecker.MALFORMED_NOT_AT_ONCE))
        .hasSize(2)
        .anySatisfy(id -> assertThat(id).startsWith("poison-t-8 (unknown-type on "))
        .anySatisfy(id -> assertThat(id).startsWith("poison-t-9 (wrong-types on "));
    assertThat(report.count(HistoryChecker.POISON_NOT_HANDLED)).isZero();
  }
}
