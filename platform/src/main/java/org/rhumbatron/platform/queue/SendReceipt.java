package org.rhumbatron.platform.queue;

import org.rhumbatron.protocol.Queue;

/**
 * A send the queue stored.
 *
 * @param messageId the {@code Nats-Msg-Id} it carried
 * @param streamSequence its sequence on {@code COMMANDS} (the first send's on a duplicate)
 * @param duplicate true when JetStream dropped it as a repeat inside the duplicate window
 */
public record SendReceipt(Queue queue, String messageId, long streamSequence, boolean duplicate) {}
