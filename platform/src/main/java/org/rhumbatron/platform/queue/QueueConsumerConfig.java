package org.rhumbatron.platform.queue;

import java.time.Duration;
import java.util.Objects;
import org.rhumbatron.protocol.Queue;

/**
 * One row of the consumers table (the seed's QUEUE_CONSUMERS): how the durable consumer {@code
 * q-<queue>} of one queue runs.
 *
 * @param batchSize messages one worker holds at most (and fetches at once); each is handled and
 *     settled on its own
 * @param concurrency workers, each with its own batch: the batches in flight
 * @param retries redeliveries after the first delivery; the delivery after the last retry that
 *     fails goes to the dead-letter queue
 * @param retryDelay the redelivery delay of a throw, or of a {@code retry} without a delay
 * @param deadLetterQueue where a poison message goes, or null (the consumer logs and terminates it)
 */
public record QueueConsumerConfig(
    Queue queue,
    int batchSize,
    int concurrency,
    int retries,
    Duration retryDelay,
    Queue deadLetterQueue) {

  public QueueConsumerConfig {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(retryDelay, "retryDelay");
    if (batchSize < 1 || concurrency < 1 || retries < 0) {
      throw new IllegalArgumentException(
          "queue "
              + queue.wireName()
              + ": batch size and concurrency must be at least 1 and retries at least 0, got "
              + batchSize
              + "/"
              + concurrency
              + "/"
              + retries);
    }
    if (retryDelay.isNegative() || retryDelay.isZero()) {
      throw new IllegalArgumentException(
          "queue " + queue.wireName() + ": retry delay must be positive, got " + retryDelay);
    }
    if (deadLetterQueue != null && (deadLetterQueue == queue || !queue.hasDeadLetterQueue())) {
      throw new IllegalArgumentException(
          "queue "
              + queue.wireName()
              + " cannot dead-letter to "
              + deadLetterQueue.wireName()
              + ": only a queue with a dead-letter queue may name one, and not itself");
    }
  }

  public boolean hasDeadLetterQueue() {
    return deadLetterQueue != null;
  }

  /** The same row with another retry delay (tests run the table's retries on short delays). */
  public QueueConsumerConfig withRetryDelay(Duration delay) {
    return new QueueConsumerConfig(queue, batchSize, concurrency, retries, delay, deadLetterQueue);
  }
}
