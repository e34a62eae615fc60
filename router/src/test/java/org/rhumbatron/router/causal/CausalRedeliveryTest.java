package org.rhumbatron.router.causal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.lifecycle.routes.ModelRouted;
import org.rhumbatron.platform.eventlog.EventLogClient;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.JetStreamEventLog;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.router.claims.EventClaims;
import org.rhumbatron.router.run.BatchOutcome;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * The causal-router subscription on a real stream: a batch delivered twice sends each command once,
 * counts it once toward the cap and asks Clef-flash once, also when core crashed between the send
 * and the ack (after the commit, or before it).
 */
class CausalRedeliveryTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  private CausalFixture c;
  private EventLogClient eventLog;
  private CausalRouterSubscription subscription;
  private final AtomicInteger asked = new AtomicInteger();
  private int stream;
  private final java.util.Set<String> mine = new java.util.HashSet<>();
  private long wakes0;
  private long integration0;

  @BeforeEach
  void start() throws Exception {
    c = new CausalFixture(nats.url(), db().url(), Map.of("router.ack-wait", "1s"));
    EnvelopeCodec codec = new EnvelopeCodec();
    eventLog = new EventLogClient(c.f.connection, codec, c.f.settings);
    CausalRules rules =
        c.rules(
            (e, m) -> {
              asked.incrementAndGet();
              return new ModelRouted(
                  e.eventId(),
                  e.eventType().wireName(),
                  e.projectId(),
                  m.changeId(),
                  m.taskId(),
                  m.agentId(),
                  m.eventKey(),
                  m.agentKey(),
                  "wake",
                  0.8,
                  "model",
                  3);
            },
            c.cap(1_000));
    subscription = new CausalRouterSubscription(c.f.database, new EventClaims(c.f.clock), rules);
    stream = EventStreams.streamIndex(CausalFixture.P);
    JetStreamEventLog publisher = JetStreamEventLog.bind(c.f.connection);
    List<Event> events =
        List.of(
            c.resourceEvent(EventType.INTENT_DECLARED, "path:src/api/", "other"), // wake api
            c.event(
                EventType.TASK_COMPLETED,
                c.changeA.changeId(),
                c.tasks.get("docs").taskId(),
                null,
                null), // dispatch A
            // ask ui; api is woken by the exact overlap above
            c.resourceEvent(EventType.CLAIM_RELEASED, "path:src/", "other"));
    wakes0 = c.f.commandsOn(Queue.AGENT_WAKEUPS);
    integration0 = c.f.commandsOn(Queue.INTEGRATION);
    for (Event e : events) {
      mine.add(e.eventId());
      publisher.publish(stream, e.eventId(), codec.encodeEvent(e), null).get();
    }
  }

  @AfterEach
  void close() {
    c.close();
  }

  /**
   * The next delivery of this test's {@code n} Events; the fixture's own Events on the stream (its
   * project and Changes) are acked unrouted.
   */
  private List<EventRecord> fetch(int n) {
    List<EventRecord> got = new ArrayList<>();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              for (EventRecord r : eventLog.fetch(stream, Subscription.CAUSAL_ROUTER, 100)) {
                if (mine.contains(r.event().eventId())) {
                  got.add(r);
                } else {
                  r.ack();
                }
              }
              return got.size() >= n;
            });
    return got;
  }

  private long countedForA() {
    return c.f.database.read(tx -> c.cap(1_000).countToday(tx, c.changeA.changeId()));
  }

  private void assertEachCommandOnceOnItsQueue() throws Exception {
    assertThat(c.f.commandsOn(Queue.AGENT_WAKEUPS) - wakes0).isEqualTo(2);
    assertThat(c.f.commandsOn(Queue.INTEGRATION) - integration0).isEqualTo(1);
    assertThat(countedForA()).isEqualTo(3);
    assertThat(asked)
        .as("Clef-flash is asked once per prefix overlap, not for api, woken exactly")
        .hasValue(1);
    assertThat(c.f.outbox("model.routed")).isEqualTo(1);
  }

  /**
   * The route's sends are waited for outside any write transaction: while the queue has not stored
   * them another writer commits at once (SQLite has one writer), and the Events stay unclaimed;
   * once it has, one transaction claims them and counts the commands.
   */
  @DatabaseTest
  void noWriteTransactionWaitsForTheQueue() throws Exception {
    CountDownLatch sending = new CountDownLatch(1);
    CompletableFuture<Void> queueStores = new CompletableFuture<>();
    c.transport =
        cmd -> {
          sending.countDown();
          return queueStores.thenCompose(x -> c.f.commands.send(cmd));
        };
    List<EventRecord> batch = fetch(3);
    CompletableFuture<BatchOutcome> routed =
        CompletableFuture.supplyAsync(() -> subscription.handle(stream, batch));
    try {
      assertThat(sending.await(20, TimeUnit.SECONDS)).isTrue();
      CompletableFuture<Integer> otherWriter =
          CompletableFuture.supplyAsync(
              () ->
                  c.f.database.inTransaction(
                      tx ->
                          tx.update(
                              "DELETE FROM causal_command_counts WHERE change_id = ?", "none")));
      assertThat(otherWriter.get(5, TimeUnit.SECONDS)).isZero();
      assertThat(
              new EventClaims(c.f.clock)
                  .claimedAmong(
                      c.f.database, Subscription.CAUSAL_ROUTER.durableName(), List.copyOf(mine)))
          .as("claimed only once the queue stored the commands")
          .isEmpty();
      assertThat(countedForA()).isZero();
    } finally {
      queueStores.complete(null);
    }
    BatchOutcome outcome = routed.get(20, TimeUnit.SECONDS);
    assertThat(outcome.failed()).isEmpty();
    batch.forEach(EventRecord::ack);
    assertEachCommandOnceOnItsQueue();
  }

  @DatabaseTest
  void theSameBatchHandledTwiceSendsEachCommandOnce() throws Exception {
    List<EventRecord> batch = fetch(3);
    assertThat(subscription.handle(stream, batch).allRecordsApplied()).isTrue();
    assertThat(subscription.handle(stream, batch).allRecordsApplied()).isTrue();

    assertThat(c.sentAsText())
        .containsExactlyInAnyOrder("agent.wake api", "change.dispatch A", "agent.wake ui");
    assertThat(c.sent.stream().map(Command::commandId).distinct()).hasSize(3);
    assertEachCommandOnceOnItsQueue();
  }

  @DatabaseTest
  void aCrashAfterTheCommitBeforeTheAckSendsNothingAgain() throws Exception {
    List<EventRecord> first = fetch(3);
    assertThat(subscription.handle(stream, first).allRecordsApplied()).isTrue();
    // No ack: the server delivers the batch again after the ack wait.
    List<EventRecord> again = fetch(3);
    assertThat(again).allSatisfy(r -> assertThat(r.deliveredCount()).isEqualTo(2));
    assertThat(subscription.handle(stream, again).allRecordsApplied()).isTrue();
    again.forEach(EventRecord::ack);

    assertThat(c.sent).hasSize(3);
    assertEachCommandOnceOnItsQueue();
  }

  @DatabaseTest
  void aCrashBetweenTheSendAndTheCommitSendsTheSameIdsAgainAndCountsThemOnce() throws Exception {
    // The commands reach the queue, then their acks are lost: the claiming transaction rolls back.
    c.transport =
        cmd ->
            c.f
                .commands
                .send(cmd)
                .thenCompose(
                    r -> CompletableFuture.failedFuture(new IllegalStateException("ack lost")));
    List<EventRecord> first = fetch(3);
    assertThat(subscription.handle(stream, first).failed()).hasSize(3);
    assertThat(countedForA()).as("rolled back with the claims").isZero();

    c.transport = c.f.commands::send;
    List<EventRecord> again = fetch(3);
    assertThat(subscription.handle(stream, again).allRecordsApplied()).isTrue();
    again.forEach(EventRecord::ack);

    assertThat(c.sent).as("sent twice: the queue keeps one of each id").hasSize(6);
    assertEachCommandOnceOnItsQueue();
  }
}
