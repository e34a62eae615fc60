package org.rhumbatron.app;

import static org.rhumbatron.protocol.Queue.AGENT_WAKEUPS;
import static org.rhumbatron.protocol.Queue.DEAD_LETTER;
import static org.rhumbatron.protocol.Queue.INDEXING;
import static org.rhumbatron.protocol.Queue.INTEGRATION;
import static org.rhumbatron.protocol.Queue.RELEASE;
import static org.rhumbatron.protocol.Queue.VERIFICATION;

import java.time.Duration;
import java.util.List;
import org.rhumbatron.platform.queue.QueueConsumerConfig;
import org.rhumbatron.protocol.Queue;

/**
 * The seed's QUEUE_CONSUMERS (services/core/src/consumers.ts): one table that sets the batch size,
 * concurrency, retries, retry delay and dead-letter queue of each queue's consumer {@code
 * q-<queue>}. QueueConsumersCriticalTest (the seed's dead-letter.critical.test.ts) holds it to the
 * seed's numbers.
 */
public final class QueueConsumers {

  /**
   * One row of the table.
   *
   * @param consumer the module that handles the queue
   * @param deadLetterQueue null: none (indexing: the indexer records the failure in
   *     project_indexes; dead-letter: the consumer logs the message and terminates it)
   */
  public record Row(
      Queue queue,
      String consumer,
      int batchSize,
      int concurrency,
      int retries,
      Duration retryDelay,
      Queue deadLetterQueue) {

    public QueueConsumerConfig config() {
      return new QueueConsumerConfig(
          queue, batchSize, concurrency, retries, retryDelay, deadLetterQueue);
    }
  }

  // queue, consumer, batch, concurrency, retries, retry delay, dead-letter queue
  public static final List<Row> TABLE =
      List.of(
          new Row(AGENT_WAKEUPS, "agents", 10, 2, 3, Duration.ofSeconds(30), DEAD_LETTER),
          new Row(INTEGRATION, "integration", 10, 2, 3, Duration.ofSeconds(30), DEAD_LETTER),
          new Row(VERIFICATION, "integration", 5, 2, 3, Duration.ofSeconds(30), DEAD_LETTER),
          new Row(RELEASE, "integration", 5, 2, 3, Duration.ofSeconds(30), DEAD_LETTER),
          new Row(INDEXING, "indexer", 1, 1, 3, Duration.ofSeconds(30), null),
          new Row(DEAD_LETTER, "event router", 5, 1, 5, Duration.ofSeconds(60), null));

  private QueueConsumers() {}

  /** The row of {@code queue}. */
  public static Row row(Queue queue) {
    return TABLE.stream()
        .filter(r -> r.queue() == queue)
        .findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no consumer row for " + queue));
  }

  /** The consumer configuration of {@code queue}. */
  public static QueueConsumerConfig of(Queue queue) {
    return row(queue).config();
  }
}
