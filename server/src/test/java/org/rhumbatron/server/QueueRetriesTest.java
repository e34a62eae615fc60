package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.nats.client.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.platform.queue.Delivery;
import org.rhumbatron.platform.queue.HandlerRuns;
import org.rhumbatron.platform.queue.JetStreamCommandTransport;
import org.rhumbatron.platform.queue.Outcome;
import org.rhumbatron.platform.queue.QueueConsumerConfig;
import org.rhumbatron.platform.queue.QueueFailure;
import org.rhumbatron.platform.queue.QueueListener;
import org.rhumbatron.platform.queue.QueueRuntime;
import org.rhumbatron.platform.queue.QueueTimings;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.DeadLetterMessage;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * Every queue with its row of {@link QueueConsumers} (the retry delay shortened): a handler that
 * throws N times, N below, at and above the row's retries, then succeeds, ends acked or
 * dead-lettered (or, without a dead-letter queue, logged and terminated) as the table says, with
 * each redelivery after the retry delay.
 */
class QueueRetriesTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  private static final Duration DELAY = Duration.ofMillis(200);
  private final EnvelopeCodec codec = new EnvelopeCodec();
  private final SettableClock clock = new SettableClock(Instant.parse("2026-06-01T08:00:00Z"));
  private final List<AutoCloseable> running = new ArrayList<>();
  private Connection connection;
  private Commands commands;
  private QueueRuntime runtime;

  @BeforeEach
  void start() throws Exception {
    connection = JetStreamConnections.connect(nats.url(), "test");
    new JetStreamTopology(connection.jetStreamManagement(), Settings.defaults()).ensure();
    commands = new Commands(new JetStreamCommandTransport(connection), codec);
    runtime =
        new QueueRuntime(
            connection,
            commands,
            codec,
            new QueueTimings(Duration.ofSeconds(5), Duration.ofSeconds(1), Duration.ofSeconds(30)),
            clock,
            HandlerRuns.serverCount());
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : running) {
      c.close();
    }
    connection.close();
  }

  static Stream<Arguments> queuesAndFailures() {
    return QueueConsumers.TABLE.stream()
        .flatMap(
            row ->
                Stream.of(row.retries() - 1, row.retries(), row.retries() + 1)
                    .map(n -> Arguments.of(row.queue(), n)));
  }

  /** What a handler saw: the delivery count and when it arrived (monotonic nanos). */
  record Arrival(long deliveredCount, long nanos) {}

  @ParameterizedTest(name = "{0} throws {1} times")
  @MethodSource("queuesAndFailures")
  void aHandlerThatThrowsNTimesEndsAsTheTableSays(Queue queue, int failures) throws Exception {
    QueueConsumers.Row row = QueueConsumers.row(queue);
    QueueConsumerConfig config = row.config().withRetryDelay(DELAY);
    List<Arrival> arrivals = new CopyOnWriteArrayList<>();
    List<Long> acked = new CopyOnWriteArrayList<>();
    List<QueueFailure<?>> gaveUp = new CopyOnWriteArrayList<>();
    List<DeadLetterMessage> deadLetters = new CopyOnWriteArrayList<>();
    if (queue != Queue.DEAD_LETTER) {
      running.add(
          runtime.runDeadLetterConsumer(
              QueueConsumers.of(Queue.DEAD_LETTER),
              (dl, d) -> {
                deadLetters.add(dl);
                return Outcome.ack();
              },
              null));
    }
    record Flaky(List<Arrival> arrivals, int failures) {
      Outcome handle(Delivery d) {
        arrivals.add(new Arrival(d.deliveredCount(), System.nanoTime()));
        if (arrivals.size() <= failures) {
          throw new IllegalStateException("failure " + arrivals.size());
        }
        return Outcome.ack();
      }
    }
    Flaky flaky = new Flaky(arrivals, failures);
    if (queue == Queue.DEAD_LETTER) {
      running.add(
          runtime.runDeadLetterConsumer(
              config, (dl, d) -> flaky.handle(d), listener(acked, gaveUp)));
      DeadLetterMessage dl =
          new DeadLetterMessage(Queue.INTEGRATION, 4, "poison", "{}", clock.instant());
      commands.sendDeadLetter(dl, 1).get();
    } else {
      running.add(
          runtime.runQueueConsumer(config, (c, d) -> flaky.handle(d), listener(acked, gaveUp)));
      commands.send(commandOn(queue)).get();
    }

    boolean succeeds = failures <= row.retries();
    int deliveries = succeeds ? failures + 1 : row.retries() + 1;
    await().atMost(Duration.ofSeconds(20)).until(() -> !acked.isEmpty() || !gaveUp.isEmpty());
    assertThat(arrivals)
        .extracting(Arrival::deliveredCount)
        .containsExactlyElementsOf(counts(deliveries));
    for (int i = 1; i < arrivals.size(); i++) {
      Duration gap = Duration.ofNanos(arrivals.get(i).nanos() - arrivals.get(i - 1).nanos());
      assertThat(gap)
          .as("redelivery %d came after the retry delay", i + 1)
          .isGreaterThanOrEqualTo(DELAY.minusMillis(20));
    }
    if (succeeds) {
      assertThat(acked).containsExactly((long) deliveries);
      assertThat(gaveUp).isEmpty();
    } else {
      assertThat(acked).isEmpty();
      assertThat(gaveUp)
          .singleElement()
          .satisfies(
              f -> {
                assertThat(f.deadLettered()).isEqualTo(row.deadLetterQueue() != null);
                assertThat(f.delivery().deliveredCount()).isEqualTo(row.retries() + 1);
                assertThat(f.reason())
                    .isEqualTo("java.lang.IllegalStateException: failure " + deliveries);
              });
      if (row.deadLetterQueue() != null) {
        await().atMost(Duration.ofSeconds(5)).until(() -> deadLetters.size() == 1);
        assertThat(deadLetters.get(0).originQueue()).isEqualTo(queue);
        assertThat(deadLetters.get(0).deliveryCount()).isEqualTo(row.retries() + 1);
      }
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> messagesOnCommands() == 0);
    assertThat(arrivals).hasSize(deliveries);
    if (queue != Queue.DEAD_LETTER
        && !(failures > row.retries() && row.deadLetterQueue() != null)) {
      assertThat(deadLetters).isEmpty();
    }
  }

  private static <T> QueueListener<T> listener(List<Long> acked, List<QueueFailure<?>> gaveUp) {
    return new QueueListener<>() {
      @Override
      public void succeeded(T message, Delivery delivery) {
        acked.add(delivery.deliveredCount());
      }

      @Override
      public void gaveUp(QueueFailure<T> failure) {
        gaveUp.add(failure);
      }
    };
  }

  private static List<Long> counts(int n) {
    List<Long> out = new ArrayList<>();
    for (long i = 1; i <= n; i++) {
      out.add(i);
    }
    return out;
  }

  private long messagesOnCommands() throws Exception {
    return connection
        .jetStreamManagement()
        .getStreamInfo(Queue.STREAM_NAME)
        .getStreamState()
        .getMsgCount();
  }

  private Command commandOn(Queue queue) {
    CommandType type =
        Stream.of(CommandType.values()).filter(t -> t.queue() == queue).findFirst().orElseThrow();
    return Command.builder()
        .commandId("cmd_retries_" + queue.wireName())
        .commandType(type)
        .projectId("p1")
        .changeId("c1")
        .createdAt(clock.instant())
        .build();
  }
}
