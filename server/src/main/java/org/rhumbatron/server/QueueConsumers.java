package org.rhumbatron.server;

import static org.rhumbatron.protocol.Queue.AGENT_WAKEUPS;
import static org.rhumbatron.protocol.Queue.DEAD_LETTER;
import static org.rhumbatron.protocol.Queue.INDEXING;
import static org.rhumbatron.protocol.Queue.INTEGRATION;
import static org.rhumbatron.protocol.Queue.RELEASE;
import static org.rhumbatron.protocol.Queue.VERIFICATION;

import java.time.Duration;
import java.util.List;
import org.rhumbatron.platform.config.Settings;
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

  // queue, consumer, dead-letter queue; batch, concurrency, retries and retry delay are settings
  // (Settings.QUEUE_*, the seed's numbers as defaults).
  private record Shape(Queue queue, String consumer, Queue deadLetterQueue) {}

  private static final List<Shape> SHAPES =
      List.of(
          new Shape(AGENT_WAKEUPS, "agents", DEAD_LETTER),
          new Shape(INTEGRATION, "integration", DEAD_LETTER),
          new Shape(VERIFICATION, "integration", DEAD_LETTER),
          new Shape(RELEASE, "integration", DEAD_LETTER),
          new Shape(INDEXING, "indexer", null),
          new Shape(DEAD_LETTER, "event router", null));

  /** The table with the seed's numbers (the settings' defaults). */
  public static final List<Row> TABLE = table(Settings.defaults());

  /** The table with the numbers of {@code settings}. */
  public static List<Row> table(Settings settings) {
    return SHAPES.stream()
        .map(
            shape -> {
              Settings.QueueRow row = Settings.queueRow(shape.queue());
              return new Row(
                  shape.queue(),
                  shape.consumer(),
                  settings.get(row.batchSize()),
                  settings.get(row.concurrency()),
                  settings.get(row.retries()),
                  settings.get(row.retryDelay()),
                  shape.deadLetterQueue());
            })
        .toList();
  }

  private QueueConsumers() {}

  /** The row of {@code queue}. */
  public static Row row(Queue queue) {
    return TABLE.stream()
        .filter(r -> r.queue() == queue)
        .findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no consumer row for " + queue));
  }

  /** The consumer configuration of {@code queue}, with the seed's numbers. */
  public static QueueConsumerConfig of(Queue queue) {
    return row(queue).config();
  }

  /** The consumer configuration of {@code queue} with the numbers of {@code settings}. */
  public static QueueConsumerConfig of(Queue queue, Settings settings) {
    return table(settings).stream()
        .filter(r -> r.queue() == queue)
        .findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no consumer row for " + queue))
        .config();
  }
}
