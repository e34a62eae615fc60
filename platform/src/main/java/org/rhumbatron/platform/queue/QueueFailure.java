package org.rhumbatron.platform.queue;

/**
 * A message the consumer gave up on: after its last retry, or at once when it was malformed.
 *
 * @param message the decoded message, or null when it did not decode
 * @param original the body as UTF-8 text
 * @param reason the last error, or the decode error naming the field and the rule
 * @param deadLettered true when it went to the dead-letter queue, false when it was only logged
 */
public record QueueFailure<T>(
    Delivery delivery, T message, String original, String reason, boolean deadLettered) {}
