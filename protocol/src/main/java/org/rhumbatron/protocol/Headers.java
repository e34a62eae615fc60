package org.rhumbatron.protocol;

/**
 * Names of the NATS message headers, in one place so producers and consumers agree.
 *
 * <p>Only {@link #MSG_ID} carries a rule: JetStream drops a second publish with the same id inside
 * the 2-hour duplicate window. The others let a consumer route or log a message without decoding
 * it; the envelope in the body stays the truth.
 */
public final class Headers {

  /**
   * JetStream's dedupe header ("the event-id header" of the seed): the eventId for an Event, {@code
   * <queue>:<commandId>} for a Command.
   */
  public static final String MSG_ID = "Nats-Msg-Id";

  /** JetStream rejects the publish unless the subject belongs to this stream. */
  public static final String EXPECTED_STREAM = "Nats-Expected-Stream";

  /** The publisher chains its sends: stored only right after the message with this id. */
  public static final String EXPECTED_LAST_MSG_ID = "Nats-Expected-Last-Msg-Id";

  public static final String CONTENT_TYPE = "Content-Type";

  /** The value of {@link #CONTENT_TYPE} for every envelope. */
  public static final String APPLICATION_JSON = "application/json";

  /** The Event's type wire name, e.g. {@code task.completed}. */
  public static final String EVENT_TYPE = "Rhumbatron-Event-Type";

  /** The Command's type wire name, e.g. {@code agent.wake}. */
  public static final String COMMAND_TYPE = "Rhumbatron-Command-Type";

  /** The envelope's projectId. */
  public static final String PROJECT_ID = "Rhumbatron-Project-Id";

  /**
   * On an Event: the seq of its outbox row, which orders the Events of one writer (an actor's
   * transactions run one at a time) whatever their stream order, also after a lost tail sent an
   * older Event again behind a newer one.
   */
  public static final String OUTBOX_SEQ = "Rhumbatron-Outbox-Seq";

  /** On a dead-letter message: the queue the command failed on. */
  public static final String ORIGIN_QUEUE = "Rhumbatron-Origin-Queue";

  /**
   * On an empty message that only takes up a stream sequence: after a stream lost its tail, the
   * sequences its consumers had already read past are filled, and every reader skips the fillers.
   */
  public static final String FILLER = "Rhumbatron-Filler";

  private Headers() {}
}
