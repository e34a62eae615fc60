package org.rhumbatron.protocol;

import java.time.Instant;

/**
 * What a queue consumer sends to the dead-letter queue after a command's last retry.
 *
 * <p>It wraps the original message as the raw text that arrived, not as a decoded {@link Command}:
 * a message that could not be decoded is exactly the kind that ends up here, and the dead-letter
 * consumer must still record it. It decodes {@link #original()} with {@link
 * EnvelopeCodec#decodeCommand(String)} when it can.
 *
 * @param originQueue the queue the command failed on; one that {@link Queue#hasDeadLetterQueue()
 *     has a dead-letter queue}
 * @param deliveryCount deliveries of the original, at least 1
 * @param error why the last delivery failed, cut to {@link #MAX_ERROR_CHARS} characters
 * @param original the original message body as UTF-8 text, possibly empty; like {@code error},
 *     unpaired surrogates (which no UTF-8 decoder produces) become U+FFFD
 * @param receivedAt when the consumer gave up on it; the protocol reads no clock
 */
public record DeadLetterMessage(
    Queue originQueue, int deliveryCount, String error, String original, Instant receivedAt) {

  /** Longest error kept; a stack trace is cut rather than losing the dead letter. */
  public static final int MAX_ERROR_CHARS = 8192;

  public DeadLetterMessage {
    Check.required("/originQueue", originQueue);
    if (!originQueue.hasDeadLetterQueue()) {
      throw new EnvelopeException(
          "/originQueue",
          EnvelopeException.ENUM,
          "queue " + originQueue.wireName() + " has no dead-letter queue");
    }
    Check.atLeast("/deliveryCount", deliveryCount, 1);
    // Normalise rather than reject: losing a dead letter over its error text would be worse.
    error = Check.replaceUnpairedSurrogates(cut(Check.required("/error", error)));
    original = Check.replaceUnpairedSurrogates(Check.required("/original", original));
    Check.timestamp("/receivedAt", receivedAt);
  }

  private static String cut(String error) {
    if (error.length() <= MAX_ERROR_CHARS) {
      return error;
    }
    int end = MAX_ERROR_CHARS;
    if (Character.isHighSurrogate(error.charAt(end - 1))) {
      end--; // never split a surrogate pair: the half would not be valid UTF-8
    }
    return error.substring(0, end);
  }
}
