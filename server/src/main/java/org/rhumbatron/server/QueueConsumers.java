package org.rhumbatron.server;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.queue.QueueConsumerConfig;
import org.rhumbatron.protocol.Queue;

/**
 * The seed's QUEUE_CONSUMERS (services/core/src/consumers.ts) as the consumers run it: the table
 * that protocol's {@link Queue} declares, with the numbers of the settings {@code
 * queues.<queue>.*}. QueueConsumersCriticalTest (the seed's dead-letter.critical.test.ts) holds it
 * to the seed's.
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

  /** The table with the seed's numbers (the settings' defaults). */
  public static final List<Row> TABLE = table(Settings.defaults());

  /** The table with the numbers of {@code settings}. */
  public static List<Row> table(Settings settings) {
    return Arrays.stream(Queue.values())
        .map(
            queue -> {
              Settings.QueueRow row = Settings.queueRow(queue);
              return new Row(
                  queue,
                  queue.consumer(),
                  settings.get(row.batchSize()),
                  settings.get(row.concurrency()),
                  settings.get(row.retries()),
                  settings.get(row.retryDelay()),
                  queue.deadLetterQueue());
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
