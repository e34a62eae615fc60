package org.rhumbatron.router.deadletter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.nats.client.Connection;
import io.nats.client.api.MessageInfo;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.JetStreamEventLog;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.platform.queue.DatabaseHandlerRuns;
import org.rhumbatron.platform.queue.Delivery;
import org.rhumbatron.platform.queue.JetStreamCommandTransport;
import org.rhumbatron.platform.queue.Outcome;
import org.rhumbatron.platform.queue.QueueConsumerConfig;
import org.rhumbatron.platform.queue.QueueRuntime;
import org.rhumbatron.platform.queue.QueueTimings;
import org.rhumbatron.platform.queue.SendReceipt;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.DeadLetterMessage;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.Headers;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.protocol.StableIds;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/** The dead-letter path on a real nats-server and database; run against SQLite and PostgreSQL. */
class DeadLetterTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  private static final Duration SHORT = Duration.ofMillis(100);
  private static final String P = "p-dl";
  private static final String C = "c-dl";
  private final SettableClock clock = new SettableClock(Instant.parse("2026-05-01T09:00:00Z"));
  private final EnvelopeCodec codec = new EnvelopeCodec();
  private final List<AutoCloseable> running = new ArrayList<>();
  private Database database;
  private Connection connection;
  private Coordinator coordinator;
  private Commands commands;
  private QueueRuntime runtime;
  private DeadLetterConsumer consumer;
  private DeadLetterOperator operator;

  @BeforeEach
  void start() throws Exception {
    database = Database.open(db().url());
    connection = JetStreamConnections.connect(nats.url(), "test");
    Settings settings = Settings.defaults();
    new JetStreamTopology(connection.jetStreamManagement(), settings).ensure();
    coordinator =
        Coordinator.wiring()
            .database(database)
            .transport(JetStreamEventLog.bind(connection))
            .clock(clock)
            .settings(settings)
            .wire();
    commands = new Commands(new JetStreamCommandTransport(connection), codec);
    runtime =
        new QueueRuntime(
            connection,
            commands,
            codec,
            new QueueTimings(Duration.ofSeconds(5), Duration.ofSeconds(1), Duration.ofSeconds(20)),
            clock,
            new DatabaseHandlerRuns(database, clock, Duration.ofDays(14)));
    consumer = new DeadLetterConsumer(database, coordinator.changeEvents(), codec, clock);
    operator = new DeadLetterOperator(database, commands, codec, clock);
    database.inTransaction(
        tx -> {
          tx.update(
              "INSERT INTO projects (project_id, tenant_id, name, created_at_ms, updated_at_ms)"
                  + " VALUES (?, 'tenant-1', 'Demo', 0, 0)",
              P);
          insertChange(tx, C, "open");
          return null;
        });
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : running) {
      c.close();
    }
    coordinator.close();
    connection.close();
    database.close();
  }

  private static void insertChange(org.rhumbatron.platform.db.Tx tx, String changeId, String state)
      throws java.sql.SQLException {
    tx.update(
        "INSERT INTO changes (change_id, project_id, client_request_id, state, created_at_ms,"
            + " updated_at_ms, last_activity_at_ms) VALUES (?, ?, ?, ?, 0, 0, 0)",
        changeId,
        P,
        "req-" + changeId,
        state);
  }

  private void task(String taskId, String state) {
    database.inTransaction(
        tx ->
            tx.update(
                "INSERT INTO tasks (task_id, change_id, project_id, state, created_at_ms,"
                    + " updated_at_ms) VALUES (?, ?, ?, ?, 0, 0)",
                taskId,
                C,
                P,
                state));
  }

  private Command command(CommandType type, String commandId, String taskId) {
    return Command.builder()
        .commandId(commandId)
        .commandType(type)
        .projectId(P)
        .changeId(C)
        .taskId(taskId)
        .createdAt(clock.instant())
        .build();
  }

  private DeadLetterMessage deadLetter(Queue origin, Command command, String error) {
    return new DeadLetterMessage(
        origin,
        4,
        error,
        new String(codec.encodeCommand(command), java.nio.charset.StandardCharsets.UTF_8),
        clock.instant());
  }

  private String taskState(String taskId) {
    return database.read(
        tx ->
            tx.queryFirst(
                    "SELECT state || '/' || COALESCE(blocked_limit, '') FROM tasks WHERE task_id = ?",
                    rs -> rs.getString(1),
                    taskId)
                .orElseThrow());
  }

  private String changeReason(String changeId) {
    return database.read(
        tx ->
            tx.queryFirst(
                    "SELECT reason FROM changes WHERE change_id = ?",
                    rs -> rs.getString(1),
                    changeId)
                .orElse(null));
  }

  private List<String> outboxEventIds(EventType type) {
    return database.read(
        tx ->
            tx.query(
                "SELECT event_id FROM outbox WHERE event_type = ? ORDER BY seq",
                rs -> rs.getString(1),
                type.wireName()));
  }

  private long deadLetterRows() {
    return database.read(tx -> tx.queryLong("SELECT COUNT(*) FROM dead_letters"));
  }

  @DatabaseTest
  void aPoisonedWakeBlocksItsTaskWritesTaskFailedOnceAndRetryThenSuccessClosesItAsSucceeded()
      throws Exception {
    task("t1", "assigned");
    List<Integer> attemptsSeen = new CopyOnWriteArrayList<>();
    running.add(
        runtime.runQueueConsumer(
            new QueueConsumerConfig(Queue.AGENT_WAKEUPS, 10, 2, 3, SHORT, Queue.DEAD_LETTER),
            (c, d) -> {
              attemptsSeen.add(c.attempt());
              if (c.attempt() == 1) {
                throw new IllegalStateException("agent runtime refused " + c.taskId());
              }
              return Outcome.ack();
            },
            operator.successHook()));
    AtomicInteger dlHandled = new AtomicInteger();
    List<DeadLetterMessage> delivered = new CopyOnWriteArrayList<>();
    running.add(
        runtime.runDeadLetterConsumer(
            new QueueConsumerConfig(Queue.DEAD_LETTER, 5, 1, 5, SHORT, null),
            (dl, d) -> {
              delivered.add(dl);
              Outcome o = consumer.handle(dl, d);
              dlHandled.incrementAndGet();
              return o;
            },
            consumer));
    Command wake = command(CommandType.AGENT_WAKE, StableIds.readyWake("t1"), "t1");
    commands.send(wake).get();

    await().atMost(Duration.ofSeconds(15)).until(() -> dlHandled.get() == 1);
    DeadLetter row = operator.findByCommandId(wake.commandId()).orElseThrow();
    assertThat(row.open()).isTrue();
    assertThat(row.kind()).isEqualTo("command");
    assertThat(row.commandType()).isEqualTo("agent.wake");
    assertThat(row.originQueue()).isEqualTo("agent-wakeups");
    assertThat(row.deliveryCount()).isEqualTo(4);
    assertThat(row.reason()).contains("agent runtime refused t1");
    assertThat(row.taskId()).isEqualTo("t1");
    assertThat(row.attempt()).isEqualTo(1);
    assertThat(attemptsSeen).containsExactly(1, 1, 1, 1);
    assertThat(taskState("t1")).isEqualTo("blocked/dead_letter");
    String taskFailedId =
        StableIds.stableEventId(
            C, EventType.TASK_FAILED, "t1", "dead_letter:" + wake.commandId() + ":a1");
    assertThat(outboxEventIds(EventType.TASK_FAILED)).containsExactly(taskFailedId);

    // The same dead-letter message delivered a second time (at least once): nothing new.
    commands.sendDeadLetter(delivered.get(0), 9_999).get();
    await().atMost(Duration.ofSeconds(10)).until(() -> dlHandled.get() == 2);
    assertThat(deadLetterRows()).isEqualTo(1);
    assertThat(outboxEventIds(EventType.TASK_FAILED)).containsExactly(taskFailedId);

    // The operator retries: attempt 2 on agent-wakeups with a new message id; it succeeds.
    clock.advance(Duration.ofMinutes(3));
    SendReceipt receipt = operator.retry(row.id(), "alice");
    assertThat(receipt.queue()).isEqualTo(Queue.AGENT_WAKEUPS);
    assertThat(receipt.messageId()).isEqualTo("agent-wakeups:cmd_t1_ready:a2");
    assertThat(receipt.duplicate()).isFalse();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> !operator.findByCommandId(wake.commandId()).orElseThrow().open());
    DeadLetter closed = operator.find(row.id()).orElseThrow();
    assertThat(closed.resolution()).isEqualTo("succeeded");
    assertThat(closed.resolvedBy()).isEqualTo("q-agent-wakeups");
    assertThat(closed.retriedBy()).isEqualTo("alice");
    assertThat(closed.retriedAt()).isEqualTo(clock.instant());
    assertThat(closed.retriedAttempt()).isEqualTo(2);
    assertThat(attemptsSeen).containsExactly(1, 1, 1, 1, 2);
    assertThat(dlHandled.get()).isEqualTo(2);
    assertThat(operator.listOpen(10)).isEmpty();
  }

  @DatabaseTest
  void aCommandWithoutATaskOrWithARunningTaskPutsTheReasonOnTheChange() throws Exception {
    task("t-run", "running");
    Delivery delivery = new Delivery(Queue.DEAD_LETTER, 1, 1, clock.instant(), null);
    Command settle = command(CommandType.CHANGE_SETTLE, "cmd_settle_1", null);
    assertThat(consumer.record(deadLetter(Queue.INTEGRATION, settle, "settle exploded")))
        .isEqualTo(DeadLetterConsumer.Recorded.CHANGE_REASON);
    assertThat(changeReason(C))
        .isEqualTo("dead letter cmd_settle_1 from integration: settle exploded");

    Command wake = command(CommandType.AGENT_WAKE, StableIds.readyWake("t-run"), "t-run");
    assertThat(consumer.handle(deadLetter(Queue.AGENT_WAKEUPS, wake, "wake exploded"), delivery))
        .isInstanceOf(Outcome.Ack.class);
    assertThat(taskState("t-run")).isEqualTo("running/");
    assertThat(changeReason(C)).contains("wake exploded");
    assertThat(outboxEventIds(EventType.TASK_FAILED)).isEmpty();
    assertThat(deadLetterRows()).isEqualTo(2);

    // A ready Task is blocked like an assigned one; a pending one is not.
    task("t-ready", "ready");
    task("t-pending", "pending");
    Command readyWake = command(CommandType.AGENT_WAKE, StableIds.readyWake("t-ready"), "t-ready");
    Command pendingWake =
        command(CommandType.AGENT_WAKE, StableIds.readyWake("t-pending"), "t-pending");
    assertThat(consumer.record(deadLetter(Queue.AGENT_WAKEUPS, readyWake, "x")))
        .isEqualTo(DeadLetterConsumer.Recorded.TASK_BLOCKED);
    assertThat(consumer.record(deadLetter(Queue.AGENT_WAKEUPS, pendingWake, "y")))
        .isEqualTo(DeadLetterConsumer.Recorded.CHANGE_REASON);
    assertThat(taskState("t-ready")).isEqualTo("blocked/dead_letter");
    assertThat(taskState("t-pending")).isEqualTo("pending/");
    assertThat(outboxEventIds(EventType.TASK_FAILED)).hasSize(1);
    // A repeat of each writes nothing.
    assertThat(consumer.record(deadLetter(Queue.AGENT_WAKEUPS, readyWake, "x")))
        .isEqualTo(DeadLetterConsumer.Recorded.DUPLICATE);
    assertThat(consumer.record(deadLetter(Queue.INTEGRATION, settle, "settle exploded")))
        .isEqualTo(DeadLetterConsumer.Recorded.DUPLICATE);
    assertThat(deadLetterRows()).isEqualTo(4);
  }

  @DatabaseTest
  void retrySendsEveryOtherCommandToIntegrationWithAttemptPlusOne() throws Exception {
    Command verify = command(CommandType.VERIFICATION_START, StableIds.verify("cand1"), null);
    consumer.record(deadLetter(Queue.VERIFICATION, verify, "verifier down"));
    DeadLetter row = operator.findByCommandId(verify.commandId()).orElseThrow();
    SendReceipt receipt = operator.retry(row.id(), "bob");
    assertThat(receipt.queue()).isEqualTo(Queue.INTEGRATION);
    assertThat(receipt.messageId()).isEqualTo("integration:cmd_cand1_verify:a2");
    MessageInfo sent =
        connection.jetStreamManagement().getLastMessage(Queue.STREAM_NAME, "cmd.integration");
    assertThat(sent.getHeaders().getFirst(Headers.MSG_ID)).isEqualTo(receipt.messageId());
    assertThat(codec.decodeCommand(sent.getData())).isEqualTo(verify.withAttempt(2));
    // A double click sends the same attempt again: JetStream drops it.
    assertThat(operator.retry(row.id(), "bob").duplicate()).isTrue();
    // The retried command fails into a dead letter again: the row reopens for attempt 2.
    operator.dismiss(row.id(), "bob");
    assertThat(consumer.record(deadLetter(Queue.INTEGRATION, verify.withAttempt(2), "still down")))
        .isEqualTo(DeadLetterConsumer.Recorded.CHANGE_REASON);
    DeadLetter reopened = operator.find(row.id()).orElseThrow();
    assertThat(reopened.open()).isTrue();
    assertThat(reopened.attempt()).isEqualTo(2);
    assertThat(reopened.reason()).isEqualTo("still down");
    assertThat(operator.retry(row.id(), "bob").messageId())
        .isEqualTo("integration:cmd_cand1_verify:a3");
  }

  @DatabaseTest
  void dismissRecordsWhoAndWhenAndClosedOrUnknownRowsAreClearErrors() throws Exception {
    Command dispatch = command(CommandType.CHANGE_DISPATCH, "cmd_dispatch_1", null);
    consumer.record(deadLetter(Queue.INTEGRATION, dispatch, "no agents"));
    DeadLetter row = operator.listOpen(10).get(0);
    clock.advance(Duration.ofMinutes(1));
    DeadLetter dismissed = operator.dismiss(row.id(), "carol");
    assertThat(dismissed.status()).isEqualTo("closed");
    assertThat(dismissed.resolution()).isEqualTo("dismissed");
    assertThat(dismissed.resolvedBy()).isEqualTo("carol");
    assertThat(dismissed.resolvedAt()).isEqualTo(clock.instant());
    assertThatThrownBy(() -> operator.dismiss(row.id(), "carol"))
        .isInstanceOf(DeadLetterClosedException.class)
        .hasMessageContaining("cmd_dispatch_1")
        .hasMessageContaining("dismissed");
    assertThatThrownBy(() -> operator.retry(row.id(), "carol"))
        .isInstanceOf(DeadLetterClosedException.class);
    assertThatThrownBy(() -> operator.retry(424242, "carol"))
        .isInstanceOf(DeadLetterNotFoundException.class)
        .hasMessageContaining("424242");
    assertThat(operator.listOpen(10)).isEmpty();
  }

  @DatabaseTest
  void anEventBatchDeadLetterCanOnlyBeDismissed() {
    database.inTransaction(
        tx ->
            tx.update(
                "INSERT INTO dead_letters (command_id, kind, command, reason, delivery_count,"
                    + " created_at_ms) VALUES ('batch:causal-router:3:abc', 'event_batch', '{}',"
                    + " '5th failure', 5, 0)"));
    DeadLetter batch = operator.listOpen(10).get(0);
    assertThatThrownBy(() -> operator.retry(batch.id(), "dave"))
        .isInstanceOf(DeadLetterNotRetryableException.class)
        .hasMessageContaining("batch:causal-router:3:abc")
        .hasMessageContaining("can only be dismissed");
    assertThat(operator.dismiss(batch.id(), "dave").resolution()).isEqualTo("dismissed");
  }

  @DatabaseTest
  void anUndecodableOriginalIsRecordedButCannotBeRetried() throws Exception {
    DeadLetterMessage garbage =
        new DeadLetterMessage(
            Queue.RELEASE,
            1,
            "malformed command envelope: envelope violates rule 'json'",
            "{nope",
            clock.instant());
    assertThat(consumer.record(garbage)).isEqualTo(DeadLetterConsumer.Recorded.ROW_ONLY);
    assertThat(consumer.record(garbage)).isEqualTo(DeadLetterConsumer.Recorded.DUPLICATE);
    DeadLetter row = operator.listOpen(10).get(0);
    assertThat(row.commandId()).startsWith("cmd_undecodable_");
    assertThat(row.reason()).contains("rule 'json'").contains("not a valid command");
    assertThatThrownBy(() -> operator.retry(row.id(), "erin"))
        .isInstanceOf(DeadLetterNotRetryableException.class)
        .hasMessageContaining("not a valid command");
  }

  /**
   * A poison body with a NUL byte (not JSON at all): PostgreSQL refuses U+0000 in text, so the row
   * shows it as the escape, and the dead letter is recorded on its first delivery in both dialects.
   */
  @DatabaseTest
  void anOriginalWithANulByteIsRecordedWithTheNulEscaped() throws Exception {
    DeadLetterMessage poison =
        new DeadLetterMessage(
            Queue.AGENT_WAKEUPS,
            1,
            "malformed command envelope: envelope violates rule 'json'",
            "{{not json \u0000 poison",
            clock.instant());
    assertThat(consumer.record(poison)).isEqualTo(DeadLetterConsumer.Recorded.ROW_ONLY);
    DeadLetter row = operator.listOpen(10).get(0);
    assertThat(row.command()).isEqualTo("{{not json \\u0000 poison");
    assertThat(consumer.record(poison)).isEqualTo(DeadLetterConsumer.Recorded.DUPLICATE);
  }

  @DatabaseTest
  void aMalformedMessageOnTheDeadLetterQueueIsRecordedWithItsReason() throws Exception {
    running.add(
        runtime.runDeadLetterConsumer(
            new QueueConsumerConfig(Queue.DEAD_LETTER, 5, 1, 5, SHORT, null), consumer, consumer));
    connection
        .jetStream()
        .publish("cmd.dead-letter", "[1,2]".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    await().atMost(Duration.ofSeconds(10)).until(() -> deadLetterRows() == 1);
    DeadLetter row = operator.listOpen(10).get(0);
    assertThat(row.originQueue()).isEqualTo("dead-letter");
    assertThat(row.command()).isEqualTo("[1,2]");
    assertThat(row.reason())
        .startsWith("malformed dead-letter envelope: envelope violates rule 'type'");
  }

  @DatabaseTest
  void settleSupersedesAndTheSweepClosesDeadLettersOfEndedChanges() throws Exception {
    database.inTransaction(
        tx -> {
          for (String state :
              List.of(
                  "completed", "failed", "cancelled", "not_selected", "declined", "verifying")) {
            insertChange(tx, "c-" + state, state);
            for (int i = 0; i < 2; i++) {
              tx.update(
                  "INSERT INTO dead_letters (command_id, kind, command, reason, change_id,"
                      + " created_at_ms) VALUES (?, 'command', '{}', 'r', ?, 0)",
                  "cmd_" + state + "_" + i,
                  "c-" + state);
            }
          }
          return null;
        });
    consumer.record(
        deadLetter(Queue.INTEGRATION, command(CommandType.CHANGE_DISPATCH, "cmd_d1", null), "r"));
    consumer.record(
        deadLetter(Queue.INTEGRATION, command(CommandType.CHANGE_DISPATCH, "cmd_d2", null), "r"));
    operator.dismiss(operator.findByCommandId("cmd_d2").orElseThrow().id(), "frank");

    assertThat(operator.supersedeForChange(C)).isEqualTo(1);
    DeadLetter superseded = operator.findByCommandId("cmd_d1").orElseThrow();
    assertThat(superseded.resolution()).isEqualTo("superseded");
    assertThat(superseded.resolvedAt()).isEqualTo(clock.instant());
    assertThat(operator.findByCommandId("cmd_d2").orElseThrow().resolution())
        .isEqualTo("dismissed");

    assertThat(operator.closeForEndedChanges(7)).isEqualTo(7);
    assertThat(operator.closeForEndedChanges(7)).isEqualTo(3);
    assertThat(operator.closeForEndedChanges(7)).isZero();
    assertThat(operator.listOpen(100))
        .extracting(DeadLetter::commandId)
        .containsExactlyInAnyOrder("cmd_verifying_0", "cmd_verifying_1");
    assertThat(operator.findByCommandId("cmd_declined_1").orElseThrow().resolution())
        .isEqualTo("change_ended");
  }

  @DatabaseTest
  void theSweepLooksBeyondAPageOfOpenChangesDeadLettersAndClosesTheOldestFirst() {
    database.inTransaction(
        tx -> {
          insertChange(tx, "c-open", "open");
          insertChange(tx, "c-done", "completed");
          for (int i = 0; i <= DeadLetterOperator.ENDED_PAGE; i++) {
            insertDeadLetter(tx, "cmd_open_" + i, "c-open");
          }
          for (int i = 0; i < 3; i++) {
            insertDeadLetter(tx, "cmd_done_" + i, "c-done");
          }
          return null;
        });

    assertThat(operator.closeForEndedChanges(1)).isEqualTo(1);
    assertThat(operator.findByCommandId("cmd_done_0").orElseThrow().resolution())
        .isEqualTo("change_ended");
    assertThat(operator.closeForEndedChanges(10)).isEqualTo(2);
    assertThat(operator.listOpen(1_000)).hasSize(DeadLetterOperator.ENDED_PAGE + 1);
  }

  private static void insertDeadLetter(
      org.rhumbatron.platform.db.Tx tx, String commandId, String changeId)
      throws java.sql.SQLException {
    tx.update(
        "INSERT INTO dead_letters (command_id, kind, command, reason, change_id, created_at_ms)"
            + " VALUES (?, 'command', '{}', 'r', ?, 0)",
        commandId,
        changeId);
  }
}
