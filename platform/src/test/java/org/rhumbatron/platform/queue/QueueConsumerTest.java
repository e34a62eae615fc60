package org.rhumbatron.platform.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.nats.client.Connection;
import io.nats.client.JetStreamManagement;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PullSubscribeOptions;
import io.nats.client.Subscription;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.ConsumerInfo;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.DeadLetterMessage;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;
import org.slf4j.LoggerFactory;

/** runQueueConsumer and Commands on a real nats-server; each test gets its own server. */
class QueueConsumerTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension db = DatabaseExtension.sqlite();

  private static final Duration SHORT = Duration.ofMillis(300);
  private final EnvelopeCodec codec = new EnvelopeCodec();
  private final Clock clock = new SettableClock(Instant.parse("2026-04-01T12:00:00Z"));
  private final List<AutoCloseable> running = new ArrayList<>();
  private Connection connection;
  private Commands commands;
  private Database database;

  @BeforeEach
  void topology() throws Exception {
    database = Database.open(db.database().url());
    connection = JetStreamConnections.connect(nats.url(), "test");
    new JetStreamTopology(connection.jetStreamManagement(), Settings.defaults()).ensure();
    commands = new Commands(new JetStreamCommandTransport(connection), codec);
  }

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : running) {
      c.close();
    }
    connection.close();
    database.close();
  }

  private QueueRuntime runtime(QueueTimings timings) {
    return new QueueRuntime(
        connection,
        commands,
        codec,
        timings,
        clock,
        new DatabaseHandlerRuns(database, clock, Duration.ofDays(14)));
  }

  /** The rows of queue_handler_runs: the messages with redeliveries counted and not yet settled. */
  private long handlerRunRows() {
    return database.read(tx -> tx.queryLong("SELECT COUNT(*) FROM queue_handler_runs"));
  }

  private QueueRuntime runtime() {
    return runtime(
        new QueueTimings(Duration.ofSeconds(5), Duration.ofSeconds(1), SHORT.multipliedBy(20)));
  }

  private static QueueConsumerConfig config(Queue queue, int concurrency, int retries) {
    return new QueueConsumerConfig(
        queue,
        10,
        concurrency,
        retries,
        SHORT,
        queue.hasDeadLetterQueue() ? Queue.DEAD_LETTER : null);
  }

  private QueueConsumer<Command> run(
      QueueRuntime runtime,
      QueueConsumerConfig config,
      QueueHandler<Command> handler,
      QueueListener<Command> listener) {
    QueueConsumer<Command> c = runtime.runQueueConsumer(config, handler, listener);
    running.add(c);
    return c;
  }

  /** Collects what reaches cmd.dead-letter. */
  private List<DeadLetterMessage> deadLetters(QueueRuntime runtime, List<String> malformed) {
    List<DeadLetterMessage> out = new CopyOnWriteArrayList<>();
    running.add(
        runtime.runDeadLetterConsumer(
            config(Queue.DEAD_LETTER, 1, 5),
            (dl, d) -> {
              out.add(dl);
              return Outcome.ack();
            },
            new QueueListener<>() {
              @Override
              public void gaveUp(QueueFailure<DeadLetterMessage> failure) {
                malformed.add(failure.reason());
              }
            }));
    return out;
  }

  static Command command(CommandType type, String id) {
    return Command.builder()
        .commandId(id)
        .commandType(type)
        .projectId("p1")
        .changeId("c1")
        .taskId("t1")
        .createdAt(Instant.parse("2026-04-01T12:00:00Z"))
        .build();
  }

  private static List<Long> serverCounts(List<Delivery> deliveries) {
    return deliveries.stream().map(Delivery::serverDeliveredCount).toList();
  }

  private long messagesOnCommands() throws Exception {
    return connection
        .jetStreamManagement()
        .getStreamInfo(Queue.STREAM_NAME)
        .getStreamState()
        .getMsgCount();
  }

  @Test
  void sendStampsTheQueueAndMessageIdAndTheSameCommandTwiceIsDeliveredOnce() throws Exception {
    List<String> handled = new CopyOnWriteArrayList<>();
    List<String> msgIds = new CopyOnWriteArrayList<>();
    run(
        runtime(),
        config(Queue.AGENT_WAKEUPS, 1, 3),
        (c, d) -> {
          handled.add(c.commandId());
          msgIds.add(d.messageId());
          return Outcome.ack();
        },
        null);
    Command wake = command(CommandType.AGENT_WAKE, "cmd_t1_ready");
    SendReceipt first = commands.send(wake).get(5, TimeUnit.SECONDS);
    SendReceipt second = commands.send(wake).get(5, TimeUnit.SECONDS);
    assertThat(first.queue()).isEqualTo(Queue.AGENT_WAKEUPS);
    assertThat(first.messageId()).isEqualTo("agent-wakeups:cmd_t1_ready");
    assertThat(first.duplicate()).isFalse();
    assertThat(second.duplicate()).isTrue();
    assertThat(second.streamSequence()).isEqualTo(first.streamSequence());
    // A later command on the same queue: once both are handled and acked, a second delivery of
    // the first would have come with them (a batch's messages are handled in no fixed order).
    commands.send(command(CommandType.AGENT_WAKE, "cmd_t2_ready")).get(5, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(10)).until(() -> handled.size() >= 2);
    await().atMost(Duration.ofSeconds(5)).until(() -> messagesOnCommands() == 0);
    assertThat(handled).containsExactlyInAnyOrder("cmd_t1_ready", "cmd_t2_ready");
    assertThat(msgIds)
        .containsExactlyInAnyOrder("agent-wakeups:cmd_t1_ready", "agent-wakeups:cmd_t2_ready");
  }

  @Test
  void aSendThatTheStreamDoesNotStoreFailsWithATypedErrorNamingTheMessageId() throws Exception {
    connection.jetStreamManagement().deleteStream(Queue.STREAM_NAME);
    Command c = command(CommandType.CHANGE_SETTLE, "cmd_settle_1");
    assertThat(commands.send(c))
        .failsWithin(Duration.ofSeconds(10))
        .withThrowableThat()
        .havingCause()
        .isInstanceOf(CommandSendException.class)
        .withMessageContaining("integration:cmd_settle_1")
        .withMessageContaining("cmd.integration");
  }

  @Test
  void theConsumerIsDurableExplicitAckFilteredWithUnlimitedServerDeliveries() throws Exception {
    run(runtime(), config(Queue.RELEASE, 2, 3), (c, d) -> Outcome.ack(), null);
    JetStreamManagement jsm = connection.jetStreamManagement();
    ConsumerConfiguration cc =
        jsm.getConsumerInfo(Queue.STREAM_NAME, "q-release").getConsumerConfiguration();
    assertThat(cc.getDurable()).isEqualTo("q-release");
    assertThat(cc.getAckPolicy()).isEqualTo(io.nats.client.api.AckPolicy.Explicit);
    assertThat(cc.getFilterSubject()).isEqualTo("cmd.release");
    assertThat(cc.getAckWait()).isEqualTo(Duration.ofSeconds(5));
    assertThat(cc.getMaxDeliver()).isEqualTo(-1);
  }

  @Test
  void aThrowNaksWithTheQueueDelayAndARetryOutcomeWithItsOwnDelay() throws Exception {
    Map<Long, Long> arrivedNanos = new ConcurrentHashMap<>();
    Duration own = Duration.ofMillis(900);
    run(
        runtime(),
        config(Queue.INTEGRATION, 1, 3),
        (c, d) -> {
          arrivedNanos.put(d.deliveredCount(), System.nanoTime());
          if (d.deliveredCount() == 1) {
            throw new IllegalStateException("first try fails");
          }
          if (d.deliveredCount() == 2) {
            return Outcome.retry(own, "not yet");
          }
          return Outcome.ack();
        },
        null);
    commands.send(command(CommandType.CHANGE_DISPATCH, "cmd_dispatch_1")).get(5, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(10)).until(() -> arrivedNanos.containsKey(3L));
    long firstGap = arrivedNanos.get(2L) - arrivedNanos.get(1L);
    long secondGap = arrivedNanos.get(3L) - arrivedNanos.get(2L);
    assertThat(Duration.ofNanos(firstGap)).isGreaterThanOrEqualTo(SHORT.minusMillis(30));
    assertThat(Duration.ofNanos(secondGap)).isGreaterThanOrEqualTo(own.minusMillis(30));
    await().atMost(Duration.ofSeconds(5)).until(() -> messagesOnCommands() == 0);
    assertThat(arrivedNanos).hasSize(3);
  }

  /**
   * A node that dies holding a Command (its connection gone, no ack, no nak): with the default
   * timings a live node's consumer handles it within the failover target of 10 s, and the one
   * result is the live node's.
   */
  @Test
  void aDeadNodesCommandIsHandledByALiveNodeWithinTenSeconds() throws Exception {
    QueueTimings defaults = QueueTimings.from(Settings.defaults());
    Connection deadNode = JetStreamConnections.connect(nats.url(), "dead-node");
    QueueRuntime dead =
        new QueueRuntime(
            deadNode,
            new Commands(new JetStreamCommandTransport(deadNode), codec),
            codec,
            defaults,
            clock,
            new DatabaseHandlerRuns(database, clock, Duration.ofDays(14)));
    CountDownLatch taken = new CountDownLatch(1);
    CountDownLatch never = new CountDownLatch(1);
    run(
        dead,
        config(Queue.VERIFICATION, 1, 3),
        (c, d) -> {
          taken.countDown();
          never.await(); // it dies holding it
          return Outcome.ack();
        },
        null);
    commands.send(command(CommandType.VERIFICATION_START, "cmd_cand1_verify")).get();
    assertThat(taken.await(10, TimeUnit.SECONDS)).isTrue();
    deadNode.close(); // the process is gone: no inProgress, no ack, no nak

    long diedAt = System.nanoTime();
    List<String> results = new java.util.concurrent.CopyOnWriteArrayList<>();
    run(
        runtime(defaults),
        config(Queue.VERIFICATION, 1, 3),
        (c, d) -> {
          results.add(c.commandId());
          return Outcome.ack();
        },
        null);
    await().atMost(Duration.ofSeconds(10)).until(() -> results.size() == 1);
    LoggerFactory.getLogger(getClass())
        .info("death to handled elsewhere: {} ms", (System.nanoTime() - diedAt) / 1_000_000);
    await().atMost(Duration.ofSeconds(5)).until(() -> messagesOnCommands() == 0);
    assertThat(results).containsExactly("cmd_cand1_verify");
  }

  @Test
  void aHandlerThatHoldsPastTheAckWaitIsExtendedAndNotRedelivered() throws Exception {
    QueueRuntime runtime =
        runtime(new QueueTimings(Duration.ofSeconds(1), SHORT, Duration.ofSeconds(30)));
    AtomicInteger calls = new AtomicInteger();
    CountDownLatch release = new CountDownLatch(1);
    // Two commands in one batch, both held: each message's deadline is extended.
    commands.send(command(CommandType.VERIFICATION_START, "cmd_cand1_verify")).get();
    commands.send(command(CommandType.VERIFICATION_START, "cmd_cand2_verify")).get();
    run(
        runtime,
        config(Queue.VERIFICATION, 1, 3),
        (c, d) -> {
          calls.incrementAndGet();
          release.await(30, TimeUnit.SECONDS); // "3 minutes" of work at test scale
          return Outcome.ack();
        },
        null);
    await().atMost(Duration.ofSeconds(5)).until(() -> calls.get() == 2);
    // Four ack waits pass while the handlers hold the batch: no redelivery in that time.
    await()
        .during(Duration.ofSeconds(4))
        .atMost(Duration.ofSeconds(6))
        .until(() -> calls.get() == 2 && redelivered("q-verification") == 0);
    release.countDown();
    await().atMost(Duration.ofSeconds(5)).until(() -> messagesOnCommands() == 0);
    assertThat(calls.get()).isEqualTo(2);
    assertThat(redelivered("q-verification")).isZero();
  }

  /**
   * One batch of five (one worker, batch 10), the first with a handler that blocks: the other four
   * are handled and acked while it blocks, as the server's books show (one ack pending, one message
   * left in the work-queue stream), and the slow one is settled when its own handler ends.
   */
  @Test
  void aSlowHandlerHoldsOnlyItsOwnMessageOfTheBatch() throws Exception {
    for (String id :
        List.of("cmd_slow_ready", "cmd_a_ready", "cmd_b_ready", "cmd_c_ready", "cmd_d_ready")) {
      commands.send(command(CommandType.AGENT_WAKE, id)).get(5, TimeUnit.SECONDS);
    }
    CountDownLatch slow = new CountDownLatch(1);
    List<String> done = new CopyOnWriteArrayList<>();
    List<Long> runs = new CopyOnWriteArrayList<>();
    run(
        runtime(),
        config(Queue.AGENT_WAKEUPS, 1, 3),
        (c, d) -> {
          runs.add(d.deliveredCount());
          if (c.commandId().equals("cmd_slow_ready")) {
            slow.await(30, TimeUnit.SECONDS);
          }
          done.add(c.commandId());
          return Outcome.ack();
        },
        null);
    await().atMost(Duration.ofSeconds(10)).until(() -> done.size() == 4);
    assertThat(done).doesNotContain("cmd_slow_ready");
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                messagesOnCommands() == 1
                    && consumerInfo("q-agent-wakeups").getNumAckPending() == 1);
    assertThat(slow.getCount()).isOne(); // still blocked
    ConsumerInfo info = consumerInfo("q-agent-wakeups");
    assertThat(info.getAckFloor().getStreamSequence()).isEqualTo(0); // the slow one is first
    assertThat(info.getDelivered().getStreamSequence()).isEqualTo(5);
    slow.countDown();
    await().atMost(Duration.ofSeconds(5)).until(() -> messagesOnCommands() == 0);
    assertThat(done).hasSize(5).endsWith("cmd_slow_ready");
    assertThat(runs).containsOnly(1L);
    assertThat(redelivered("q-agent-wakeups")).isZero();
  }

  @Test
  void aHandlerThatHangsPastTheHoldLimitIsRedelivered() throws Exception {
    QueueRuntime runtime =
        runtime(new QueueTimings(Duration.ofSeconds(1), SHORT, Duration.ofMillis(1500)));
    List<Long> deliveries = new CopyOnWriteArrayList<>();
    CountDownLatch hang = new CountDownLatch(1);
    run(
        runtime,
        config(Queue.RELEASE, 2, 3),
        (c, d) -> {
          deliveries.add(d.deliveredCount());
          if (d.deliveredCount() == 1) {
            hang.await(30, TimeUnit.SECONDS);
          }
          return Outcome.ack();
        },
        null);
    commands.send(command(CommandType.RELEASE_START, "cmd_rel_p1_1_release")).get();
    await().atMost(Duration.ofSeconds(10)).until(() -> deliveries.contains(2L));
    await().atMost(Duration.ofSeconds(5)).until(() -> messagesOnCommands() == 0);
    hang.countDown(); // the hung handler ends after its message was acked by the redelivery
    assertThat(deliveries).containsExactly(1L, 2L);
  }

  /**
   * Every delivery outlives the hold limit and is never settled (as under a core killed while it
   * held it): with 1 retry, the handler still sees deliveries 1 to 5, and the 6th goes to the
   * dead-letter queue unhandled, naming why.
   */
  @Test
  void unsettledDeliveriesReachTheHandlerThreeTimesPastTheLastRetry() throws Exception {
    QueueRuntime runtime =
        runtime(new QueueTimings(Duration.ofSeconds(1), SHORT, Duration.ofMillis(500)));
    List<String> malformed = new CopyOnWriteArrayList<>();
    List<DeadLetterMessage> dls = deadLetters(runtime, malformed);
    List<Delivery> deliveries = new CopyOnWriteArrayList<>();
    run(
        runtime,
        config(Queue.RELEASE, 2, 1),
        (c, d) -> {
          deliveries.add(d);
          Thread.sleep(700); // past the hold limit: the outcome is dropped, the message comes back
          return Outcome.ack();
        },
        null);
    commands.send(command(CommandType.RELEASE_START, "cmd_rel_p1_2_release")).get();
    await().atMost(Duration.ofSeconds(40)).until(() -> dls.size() == 1);
    // The server's counts tell a run counted wrong from a server count that went backwards.
    assertThat(deliveries)
        .extracting(Delivery::deliveredCount)
        .as("handler runs, at the server's delivered counts %s", serverCounts(deliveries))
        .containsExactly(1L, 2L, 3L, 4L, 5L);
    assertThat(dls.get(0).deliveryCount()).isEqualTo(6);
    assertThat(dls.get(0).error()).contains("not settled in time");
    // The message is terminated and its runs forgotten just after its dead letter is sent.
    await().atMost(Duration.ofSeconds(5)).until(() -> handlerRunRows() == 0);
  }

  /**
   * A redelivery that no waiting pull request can take: nats-server before 2.10.14 hands it out
   * again as a first delivery (delivered count 1). The handler still sees it as its second run.
   */
  @Test
  void aRedeliveryHandedOutAsAFirstDeliveryCountsAsTheSecondRun() throws Exception {
    QueueRuntime runtime =
        runtime(new QueueTimings(Duration.ofSeconds(1), SHORT, Duration.ofMillis(500)));
    List<Delivery> runs = new CopyOnWriteArrayList<>();
    CountDownLatch firstRunHeld = new CountDownLatch(1);
    CountDownLatch releaseFirstRun = new CountDownLatch(1);
    // Batch 1: while the first run holds the only place, the worker has no pull request waiting.
    run(
        runtime,
        new QueueConsumerConfig(Queue.RELEASE, 1, 1, 3, SHORT, Queue.DEAD_LETTER),
        (c, d) -> {
          runs.add(d);
          if (runs.size() == 1) {
            firstRunHeld.countDown();
            releaseFirstRun.await(30, TimeUnit.SECONDS); // past the hold limit: not settled
          }
          return Outcome.ack();
        },
        null);
    commands.send(command(CommandType.RELEASE_START, "cmd_rel_p1_9_release")).get();
    assertThat(firstRunHeld.await(10, TimeUnit.SECONDS)).isTrue();

    // The only request waiting when the ack wait ends cannot take the message (max bytes 1).
    Subscription tooSmall = connection.subscribe("_INBOX.too-small");
    connection.publish(
        "$JS.API.CONSUMER.MSG.NEXT." + Queue.STREAM_NAME + "." + Queue.RELEASE.durableName(),
        "_INBOX.too-small",
        "{\"batch\":1,\"max_bytes\":1,\"expires\":30000000000}".getBytes(StandardCharsets.UTF_8));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              Message m = tooSmall.nextMessage(Duration.ofMillis(100));
              return m != null && m.isStatusMessage() && m.getStatus().getCode() == 409;
            });
    releaseFirstRun.countDown();

    await().atMost(Duration.ofSeconds(10)).until(() -> runs.size() == 2 && handlerRunRows() == 0);
    assertThat(runs)
        .extracting(Delivery::deliveredCount)
        .as("handler runs, at the server's delivered counts %s", serverCounts(runs))
        .containsExactly(1L, 2L);
    await().atMost(Duration.ofSeconds(5)).until(() -> messagesOnCommands() == 0);
  }

  /**
   * The server also counts deliveries that never reach the handler (here fetched by a second
   * subscription on the durable and never settled, as over a stalled link): they spend none of the
   * message's retries, and the handler's run counts as its second.
   */
  @Test
  void deliveriesThatNeverReachTheHandlerDoNotSpendItsRetries() throws Exception {
    QueueTimings timings =
        new QueueTimings(Duration.ofMillis(500), Duration.ofMillis(200), Duration.ofSeconds(5));
    QueueRuntime runtime = runtime(timings);
    List<String> malformed = new CopyOnWriteArrayList<>();
    List<DeadLetterMessage> dls = deadLetters(runtime, malformed);
    QueueConsumerConfig config = config(Queue.RELEASE, 1, 1);
    connection
        .jetStreamManagement()
        .addOrUpdateConsumer(
            Queue.STREAM_NAME, QueueConsumer.consumerConfiguration(config, timings));
    commands.send(command(CommandType.RELEASE_START, "cmd_rel_p1_3_release")).get();
    JetStreamSubscription stalled =
        connection
            .jetStream()
            .subscribe(
                Queue.RELEASE.subject(),
                PullSubscribeOptions.bind(Queue.STREAM_NAME, Queue.RELEASE.durableName()));
    AtomicLong served = new AtomicLong();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              for (Message m : stalled.fetch(1, Duration.ofSeconds(1))) {
                served.set(m.metaData().deliveredCount()); // and never settled
              }
              return served.get() >= 8;
            });
    stalled.unsubscribe();
    List<Delivery> seen = new CopyOnWriteArrayList<>();
    run(
        runtime,
        config,
        (c, d) -> {
          seen.add(d);
          return Outcome.ack();
        },
        null);
    await().atMost(Duration.ofSeconds(10)).until(() -> messagesOnCommands() == 0);
    assertThat(seen)
        .singleElement()
        .satisfies(
            d -> {
              assertThat(d.deliveredCount()).isEqualTo(2);
              assertThat(d.serverDeliveredCount()).isGreaterThan(8);
            });
    assertThat(dls).isEmpty();
    // The runs are forgotten just after the ack that took the message off the stream.
    await().atMost(Duration.ofSeconds(5)).until(() -> handlerRunRows() == 0);
  }

  @Test
  void aDatabaseThatFailsLeavesTheServerCountInCharge() throws Exception {
    QueueRuntime runtime = runtime();
    database.close();
    List<Delivery> seen = new CopyOnWriteArrayList<>();
    run(
        runtime,
        config(Queue.INTEGRATION, 1, 2),
        (c, d) -> {
          seen.add(d);
          return d.deliveredCount() == 1 ? Outcome.retry(null, "not yet") : Outcome.ack();
        },
        null);
    commands.send(command(CommandType.CHANGE_SETTLE, "cmd_settle_c2")).get();
    await().atMost(Duration.ofSeconds(10)).until(() -> messagesOnCommands() == 0);
    assertThat(seen).extracting(Delivery::deliveredCount).containsExactly(1L, 2L);
    assertThat(seen).extracting(Delivery::serverDeliveredCount).containsExactly(1L, 2L);
  }

  @Test
  void afterTheLastRetryTheMessageGoesToDeadLetterWithErrorQueueAndCountAndIsTerminated()
      throws Exception {
    QueueRuntime runtime = runtime();
    List<String> malformed = new CopyOnWriteArrayList<>();
    List<DeadLetterMessage> dls = deadLetters(runtime, malformed);
    List<QueueFailure<Command>> failures = new CopyOnWriteArrayList<>();
    List<Long> redeliveriesSeen = new CopyOnWriteArrayList<>();
    run(
        runtime,
        config(Queue.INTEGRATION, 1, 2),
        (c, d) -> {
          redeliveriesSeen.add(
              database.read(
                  tx -> tx.queryLong("SELECT COALESCE(SUM(runs), 0) FROM queue_handler_runs")));
          throw new IllegalStateException("boom " + d.deliveredCount());
        },
        new QueueListener<>() {
          @Override
          public void gaveUp(QueueFailure<Command> failure) {
            failures.add(failure);
          }
        });
    Command settle = command(CommandType.CHANGE_SETTLE, "cmd_settle_c1");
    commands.send(settle).get();
    await().atMost(Duration.ofSeconds(10)).until(() -> dls.size() == 1);
    DeadLetterMessage dl = dls.get(0);
    assertThat(dl.originQueue()).isEqualTo(Queue.INTEGRATION);
    assertThat(dl.deliveryCount()).isEqualTo(3);
    assertThat(dl.error()).isEqualTo("java.lang.IllegalStateException: boom 3");
    assertThat(codec.decodeCommand(dl.original())).isEqualTo(settle);
    assertThat(dl.receivedAt()).isEqualTo(clock.instant());
    assertThat(failures).singleElement().satisfies(f -> assertThat(f.deadLettered()).isTrue());
    await().atMost(Duration.ofSeconds(5)).until(() -> messagesOnCommands() == 0);
    assertThat(malformed).isEmpty();
    // A first delivery writes nothing; each redelivery's run is counted before the handler runs,
    // and the count goes with the terminated message.
    assertThat(redeliveriesSeen).containsExactly(0L, 1L, 2L);
    await().atMost(Duration.ofSeconds(5)).until(() -> handlerRunRows() == 0);
  }

  @Test
  void malformedMessagesOnEveryQueueSubjectGoToDeadLetterOrTheFailureHookWithAReason()
      throws Exception {
    QueueRuntime runtime = runtime();
    List<String> malformedDeadLetters = new CopyOnWriteArrayList<>();
    List<DeadLetterMessage> dls = deadLetters(runtime, malformedDeadLetters);
    AtomicInteger handled = new AtomicInteger();
    List<QueueFailure<Command>> indexingFailures = new CopyOnWriteArrayList<>();
    for (Queue q : Queue.values()) {
      if (q == Queue.DEAD_LETTER) {
        continue;
      }
      run(
          runtime,
          config(q, 1, 3),
          (c, d) -> {
            handled.incrementAndGet();
            return Outcome.ack();
          },
          new QueueListener<>() {
            @Override
            public void gaveUp(QueueFailure<Command> failure) {
              indexingFailures.add(failure);
            }
          });
    }
    String unknownType =
        new String(
                codec.encodeCommand(command(CommandType.AGENT_WAKE, "cmd_x")),
                StandardCharsets.UTF_8)
            .replace("agent.wake", "agent.snooze");
    for (Queue q : Queue.values()) {
      connection.jetStream().publish(q.subject(), "{not json".getBytes(StandardCharsets.UTF_8));
      connection.jetStream().publish(q.subject(), unknownType.getBytes(StandardCharsets.UTF_8));
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> dls.size() == 8);
    assertThat(dls)
        .extracting(DeadLetterMessage::originQueue)
        .containsOnly(Queue.AGENT_WAKEUPS, Queue.INTEGRATION, Queue.VERIFICATION, Queue.RELEASE);
    assertThat(dls).allSatisfy(dl -> assertThat(dl.deliveryCount()).isEqualTo(1));
    assertThat(dls)
        .filteredOn(dl -> dl.original().startsWith("{not json"))
        .hasSize(4)
        .allSatisfy(
            dl ->
                assertThat(dl.error())
                    .startsWith("malformed command envelope: envelope violates rule 'json'"));
    assertThat(dls)
        .filteredOn(dl -> dl.original().contains("agent.snooze"))
        .hasSize(4)
        .allSatisfy(
            dl ->
                assertThat(dl.error())
                    .contains("/commandType violates rule 'enum'")
                    .contains("agent.snooze"));
    // indexing and dead-letter have no dead-letter queue: logged, handed to the hook, terminated.
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> indexingFailures.stream().filter(f -> !f.deadLettered()).count() == 2);
    assertThat(indexingFailures).filteredOn(f -> f.deadLettered()).hasSize(8);
    assertThat(indexingFailures)
        .filteredOn(f -> !f.deadLettered())
        .allSatisfy(
            f -> {
              assertThat(f.delivery().queue()).isEqualTo(Queue.INDEXING);
              assertThat(f.deadLettered()).isFalse();
              assertThat(f.message()).isNull();
              assertThat(f.reason()).startsWith("malformed command envelope: ");
            });
    await().atMost(Duration.ofSeconds(5)).until(() -> malformedDeadLetters.size() == 2);
    assertThat(malformedDeadLetters)
        .allSatisfy(r -> assertThat(r).startsWith("malformed dead-letter envelope: "));
    await().atMost(Duration.ofSeconds(5)).until(() -> messagesOnCommands() == 0);
    assertThat(handled.get()).isZero();
  }

  @Test
  void aConfigCannotDeadLetterFromAQueueWithoutADeadLetterQueue() {
    assertThatThrownBy(
            () -> new QueueConsumerConfig(Queue.INDEXING, 1, 1, 3, SHORT, Queue.DEAD_LETTER))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("indexing");
    assertThatThrownBy(
            () ->
                runtime()
                    .runQueueConsumer(
                        config(Queue.DEAD_LETTER, 1, 5), (c, d) -> Outcome.ack(), null))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private ConsumerInfo consumerInfo(String durable) throws Exception {
    return connection.jetStreamManagement().getConsumerInfo(Queue.STREAM_NAME, durable);
  }

  private long redelivered(String durable) throws Exception {
    ConsumerInfo info =
        connection.jetStreamManagement().getConsumerInfo(Queue.STREAM_NAME, durable);
    return info.getRedelivered();
  }
}
