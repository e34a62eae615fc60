package org.rhumbatron.platform.queue;

import java.time.Instant;
import org.rhumbatron.protocol.Queue;

/**
 * The delivery metadata of one message.
 *
 * @param deliveredCount 1 on the first delivery
 * @param streamSequence the message's sequence on {@code COMMANDS}
 * @param storedAt when the stream stored the message (the server's clock)
 * @param messageId its {@code Nats-Msg-Id}, or null
 */
public record Delivery(
    Queue queue, long deliveredCount, long streamSequence, Instant storedAt, String messageId) {}
