package org.rhumbatron.protocol;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The six queues. Each is one subject, {@code cmd.<queue>}, on the work-queue stream {@value
 * #STREAM_NAME}, read by one durable consumer {@code q-<queue>}.
 */
public enum Queue {
  AGENT_WAKEUPS("agent-wakeups", true),
  INTEGRATION("integration", true),
  VERIFICATION("verification", true),
  RELEASE("release", true),
  /** No dead-letter queue: the indexer records the failure in project_indexes. */
  INDEXING("indexing", false),
  /** No dead-letter queue: the consumer logs the message and terminates it. */
  DEAD_LETTER("dead-letter", false);

  /** The one JetStream work-queue stream that holds every queue. */
  public static final String STREAM_NAME = "COMMANDS";

  /** Prefix of every queue subject. */
  public static final String SUBJECT_PREFIX = "cmd.";

  /** Prefix of every queue's durable consumer name. */
  public static final String DURABLE_PREFIX = "q-";

  private static final Map<String, Queue> BY_WIRE_NAME =
      Arrays.stream(values()).collect(Collectors.toMap(Queue::wireName, Function.identity()));

  private final String wireName;
  private final boolean deadLetters;

  Queue(String wireName, boolean deadLetters) {
    this.wireName = wireName;
    this.deadLetters = deadLetters;
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

  /** Whether a message goes to {@link #DEAD_LETTER} after its last retry. */
  public boolean hasDeadLetterQueue() {
    return deadLetters;
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
