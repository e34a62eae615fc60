package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.server.QueueConsumers.Row;

/**
 * The seed's scripts/inject/dead-letter.critical.test.ts: the consumers table covers every queue a
 * command can reach, every dead-letter target exists and has none of its own, and the numbers are
 * the seed's, literally. {@link #problems} is one check, run on the table and on changed copies.
 */
class QueueConsumersCriticalTest {

  /** The seed's "Queues" table, copied as text: queue, consumer, batch, concurrency, retries... */
  private static final List<String> SEED_TABLE =
      List.of(
          "agent-wakeups | agents | 10 | 2 | 3 | 30 s | dead-letter",
          "integration | integration | 10 | 2 | 3 | 30 s | dead-letter",
          "verification | integration | 5 | 2 | 3 | 30 s | dead-letter",
          "release | integration | 5 | 2 | 3 | 30 s | dead-letter",
          "indexing | indexer | 1 | 1 | 3 | 30 s | none",
          "dead-letter | event router | 5 | 1 | 5 | 60 s | none");

  static String render(Row r) {
    return String.join(
        " | ",
        r.queue().wireName(),
        r.consumer(),
        String.valueOf(r.batchSize()),
        String.valueOf(r.concurrency()),
        String.valueOf(r.retries()),
        r.retryDelay().toNanosPart() == 0
            ? r.retryDelay().toSeconds() + " s"
            : r.retryDelay().toString(),
        r.deadLetterQueue() == null ? "none" : r.deadLetterQueue().wireName());
  }

  /** Everything wrong with {@code table}; empty for the seed's table. */
  static List<String> problems(List<Row> table) {
    List<String> out = new ArrayList<>();
    Map<Queue, Long> rowsPerQueue =
        table.stream().collect(Collectors.groupingBy(Row::queue, Collectors.counting()));
    for (Queue q : Queue.values()) {
      if (rowsPerQueue.getOrDefault(q, 0L) != 1) {
        out.add("queue " + q.wireName() + " has " + rowsPerQueue.getOrDefault(q, 0L) + " rows");
      }
    }
    for (CommandType type : CommandType.values()) {
      for (Queue q : List.of(type.queue(), type.retryQueue())) {
        if (!rowsPerQueue.containsKey(q)) {
          out.add(type.wireName() + " goes to " + q.wireName() + ", which has no consumer");
        }
      }
    }
    for (Row r : table) {
      if (r.deadLetterQueue() == null) {
        continue;
      }
      List<Row> target = table.stream().filter(t -> t.queue() == r.deadLetterQueue()).toList();
      if (target.isEmpty()) {
        out.add(
            r.queue().wireName()
                + " dead-letters to "
                + r.deadLetterQueue()
                + ", which has no consumer");
      } else if (target.get(0).deadLetterQueue() != null) {
        out.add(
            "dead-letter target "
                + r.deadLetterQueue().wireName()
                + " has a dead-letter queue of its own");
      }
    }
    List<String> rendered = table.stream().map(QueueConsumersCriticalTest::render).toList();
    if (!rendered.equals(SEED_TABLE)) {
      out.add("the table differs from the seed's: " + rendered + " instead of " + SEED_TABLE);
    }
    return out;
  }

  @Test
  void theTableIsTheSeedsTable() {
    assertThat(problems(QueueConsumers.TABLE)).isEmpty();
  }

  @Test
  void everyCommandTypesQueueAndRetryQueueHasAConsumer() {
    for (CommandType type : CommandType.values()) {
      assertThat(QueueConsumers.row(type.queue()).consumer()).isNotBlank();
      assertThat(QueueConsumers.row(type.retryQueue()).consumer()).isNotBlank();
    }
  }

  @Test
  void everyDeadLetterTargetExistsAndHasNoDeadLetterQueueOfItsOwn() {
    List<Row> withTarget =
        QueueConsumers.TABLE.stream().filter(r -> r.deadLetterQueue() != null).toList();
    assertThat(withTarget)
        .extracting(Row::queue)
        .containsExactlyInAnyOrder(
            Queue.AGENT_WAKEUPS, Queue.INTEGRATION, Queue.VERIFICATION, Queue.RELEASE);
    for (Row r : withTarget) {
      assertThat(QueueConsumers.row(r.deadLetterQueue()).deadLetterQueue()).isNull();
      assertThat(r.queue().hasDeadLetterQueue()).isTrue();
    }
    assertThat(QueueConsumers.row(Queue.INDEXING).deadLetterQueue()).isNull();
    assertThat(QueueConsumers.row(Queue.DEAD_LETTER).deadLetterQueue()).isNull();
  }

  @Test
  void theRowsBuildValidConsumerConfigs() {
    for (Row r : QueueConsumers.TABLE) {
      assertThat(r.config().queue()).isEqualTo(r.queue());
      assertThat(r.config().retries()).isEqualTo(r.retries());
      assertThat(r.config().hasDeadLetterQueue()).isEqualTo(r.deadLetterQueue() != null);
    }
  }

  /** Each single change to the table is caught by the same check. */
  @ParameterizedTest
  @EnumSource(Queue.class)
  void anyChangeToARowFailsTheCheck(Queue queue) {
    List<UnaryOperator<Row>> changes =
        List.of(
            r ->
                new Row(
                    r.queue(),
                    r.consumer(),
                    r.batchSize() + 1,
                    r.concurrency(),
                    r.retries(),
                    r.retryDelay(),
                    r.deadLetterQueue()),
            r ->
                new Row(
                    r.queue(),
                    r.consumer(),
                    r.batchSize(),
                    r.concurrency() + 1,
                    r.retries(),
                    r.retryDelay(),
                    r.deadLetterQueue()),
            r ->
                new Row(
                    r.queue(),
                    r.consumer(),
                    r.batchSize(),
                    r.concurrency(),
                    r.retries() + 1,
                    r.retryDelay(),
                    r.deadLetterQueue()),
            r ->
                new Row(
                    r.queue(),
                    r.consumer(),
                    r.batchSize(),
                    r.concurrency(),
                    r.retries(),
                    r.retryDelay().plusMillis(1),
                    r.deadLetterQueue()),
            r ->
                new Row(
                    r.queue(),
                    r.consumer(),
                    r.batchSize(),
                    r.concurrency(),
                    r.retries(),
                    r.retryDelay().plusSeconds(1),
                    r.deadLetterQueue()),
            r ->
                new Row(
                    r.queue(),
                    r.consumer() + "x",
                    r.batchSize(),
                    r.concurrency(),
                    r.retries(),
                    r.retryDelay(),
                    r.deadLetterQueue()),
            r ->
                new Row(
                    r.queue(),
                    r.consumer(),
                    r.batchSize(),
                    r.concurrency(),
                    r.retries(),
                    r.retryDelay(),
                    r.deadLetterQueue() == null ? Queue.DEAD_LETTER : null));
    for (UnaryOperator<Row> change : changes) {
      List<Row> changed =
          QueueConsumers.TABLE.stream().map(r -> r.queue() == queue ? change.apply(r) : r).toList();
      assertThat(problems(changed)).as("changed row of %s: %s", queue, changed).isNotEmpty();
    }
  }

  @Test
  void aMissingOrDuplicatedRowOrAnOwnDeadLetterQueueFailsTheCheck() {
    List<Row> missing = QueueConsumers.TABLE.subList(0, QueueConsumers.TABLE.size() - 1);
    assertThat(problems(missing))
        .anyMatch(p -> p.contains("dead-letter has 0 rows"))
        .anyMatch(p -> p.contains("which has no consumer"));
    List<Row> doubled = new ArrayList<>(QueueConsumers.TABLE);
    doubled.add(QueueConsumers.row(Queue.RELEASE));
    assertThat(problems(doubled)).anyMatch(p -> p.contains("release has 2 rows"));
    List<Row> ownDlq =
        QueueConsumers.TABLE.stream()
            .map(
                r ->
                    r.queue() == Queue.DEAD_LETTER
                        ? new Row(
                            r.queue(),
                            r.consumer(),
                            r.batchSize(),
                            r.concurrency(),
                            r.retries(),
                            r.retryDelay(),
                            Queue.INDEXING)
                        : r)
            .toList();
    assertThat(problems(ownDlq)).anyMatch(p -> p.contains("has a dead-letter queue of its own"));
    assertThat(Arrays.stream(Queue.values()).map(QueueConsumers::row)).hasSize(6);
  }

  @Test
  void theNumbersAreSettingsWithTheSeedsValuesAsDefaults() {
    var settings =
        org.rhumbatron.platform.config.Settings.defaults()
            .with(Map.of("queues.integration.batch", "20", "queues.dead-letter.retry-delay", "2m"));
    List<Row> changed = QueueConsumers.table(settings);
    assertThat(problems(changed))
        .containsExactly(
            "the table differs from the seed's: "
                + changed.stream().map(QueueConsumersCriticalTest::render).toList()
                + " instead of "
                + SEED_TABLE);
    assertThat(QueueConsumers.of(Queue.INTEGRATION, settings).batchSize()).isEqualTo(20);
    assertThat(QueueConsumers.of(Queue.DEAD_LETTER, settings).retryDelay())
        .isEqualTo(java.time.Duration.ofMinutes(2));
    assertThat(QueueConsumers.table(org.rhumbatron.platform.config.Settings.defaults()))
        .isEqualTo(QueueConsumers.TABLE);
  }
}
