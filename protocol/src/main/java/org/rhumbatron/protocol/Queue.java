package org.rhumbatron.protocol;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The six queues. Each is one subject, {@code cmd.<queue>}, on the work-queue stream {@value
 * #STREAM_NAME}, read by one durable consumer {@code q-<queue>}.
 *
 * <p>The constants are the seed's QUEUE_CONSUMERS table (services/core/src/consumers.ts), a row a
 * queue in the seed's column order. Its numbers are the defaults of the settings {@code
 * queues.<queue>.*}; the consumer and the dead-letter queue are structure.
 */
public enum Queue {
  // queue, consumer, batch, concurrency, retries, retry delay (s), dead-letter queue
  AGENT_WAKEUPS("agent-wakeups", "agents", 10, 2, 3, 30, "dead-letter"),
  INTEGRATION("integration", "integration", 10, 2, 3, 30, "dead-letter"),
  VERIFICATION("verification", "integration", 5, 2, 3, 30, "dead-letter"),
  RELEASE("release", "integration", 5, 2, 3, 30, "dead-letter"),
  /** No dead-letter queue: the indexer records the failure in project_indexes. */
  INDEXING("indexing", "indexer", 1, 1, 3, 30, null),
  /** No dead-letter queue: the consumer logs the message and terminates it. */
  DEAD_LETTER("dead-letter", "event router", 5, 1, 5, 60, null);

  /** The one JetStream work-queue stream that holds every queue. */
  public static final String STREAM_NAME = "COMMANDS";

  /** Prefix of every queue subject. */
  public static final String SUBJECT_PREFIX = "cmd.";

  /** Prefix of every queue's durable consumer name. */
  public static final String DURABLE_PREFIX = "q-";

  private static final Map<String, Queue> BY_WIRE_NAME =
      Arrays.stream(values()).collect(Collectors.toMap(Queue::wireName, Function.identity()));

  private final String wireName;
  private final String consumer;
  private final int batchSize;
  private final int concurrency;
  private final int retries;
  private final Duration retryDelay;
  private final String deadLetterQueue;

  Queue(
      String wireName,
      String consumer,
      int batchSize,
      int concurrency,
      int retries,
      int retryDelaySeconds,
      String deadLetterQueue) {
    this.wireName = wireName;
    this.consumer = consumer;
    this.batchSize = batchSize;
    this.concurrency = concurrency;
    this.retries = retries;
    this.retryDelay = Duration.ofSeconds(retryDelaySeconds);
    this.deadLetterQueue = deadLetterQueue;
  }

  /** The queue's name, e.g. {@code agent-wakeups}. */
  @JsonValue
  public String wireName() {
    return wireName;
  }

  /** The subject {@code cmd.<queue>}. */
  public String subject() {
    return SUBJECT_PREFIX + wireName;
  }

  /** The durable consumer {@code q-<queue>}. */
  public String durableName() {
    return DURABLE_PREFIX + wireName;
  }

  /** The module that handles the queue. */
  public String consumer() {
    return consumer;
  }

  /** The seed's batch size: the default of {@code queues.<queue>.batch}. */
  public int batchSize() {
    return batchSize;
  }

  /** The seed's concurrency: the default of {@code queues.<queue>.concurrency}. */
  public int concurrency() {
    return concurrency;
  }

  /** The seed's retries: the default of {@code queues.<queue>.retries}. */
  public int retries() {
    return retries;
  }

  /** The seed's retry delay: the default of {@code queues.<queue>.retry-delay}. */
  public Duration retryDelay() {
    return retryDelay;
  }

  /** Where a message goes after its last retry, or null for none. */
  public Queue deadLetterQueue() {
    return deadLetterQueue == null ? null : fromWire(deadLetterQueue);
  }

  /** Whether a message goes to {@link #DEAD_LETTER} after its last retry. */
  public boolean hasDeadLetterQueue() {
    return deadLetterQueue != null;
  }

  /**
   * The queue with this name.
   *
   * @throws EnvelopeException with field {@code queue} and rule {@code enum} for an unknown name
   */
  @JsonCreator
  public static Queue fromWire(String wireName) {
    Check.required("queue", wireName);
    Queue queue = BY_WIRE_NAME.get(wireName);
    if (queue == null) {
      throw new EnvelopeException(
          "queue", EnvelopeException.ENUM, "unknown queue \"" + Check.abbreviate(wireName) + "\"");
    }
    return queue;
  }
}
