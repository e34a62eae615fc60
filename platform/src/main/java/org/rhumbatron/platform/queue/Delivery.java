package org.rhumbatron.platform.queue;

import java.time.Instant;
import org.rhumbatron.protocol.Queue;

/**
 * The delivery metadata of one message.
 *
 * @param deliveredCount the handler runs of this message, this one included (1 on the first): the
 *     server's count also counts deliveries that never reached the handler, so the retry and
 *     give-up decisions use this one (see {@link HandlerRuns})
 * @param streamSequence the message's sequence on {@code COMMANDS}
 * @param storedAt when the stream stored the message (the server's clock)
 * @param messageId its {@code Nats-Msg-Id}, or null
 * @param serverDeliveredCount the server's delivered count of this delivery, for the logs
 */
public record Delivery(
    Queue queue,
    long deliveredCount,
    long streamSequence,
    Instant storedAt,
    String messageId,
    long serverDeliveredCount) {

  /** A delivery whose handler runs are the server's count. */
  public Delivery(
      Queue queue, long deliveredCount, long streamSequence, Instant storedAt, String messageId) {
    this(queue, deliveredCount, streamSequence, storedAt, messageId, deliveredCount);
  }

  /** This delivery, counted as handler run {@code runs}. */
  Delivery withHandlerRuns(long runs) {
    return new Delivery(queue, runs, streamSequence, storedAt, messageId, serverDeliveredCount);
  }
}
