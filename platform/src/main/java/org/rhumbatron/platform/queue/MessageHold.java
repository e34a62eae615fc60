package org.rhumbatron.platform.queue;

import io.nats.client.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hold on one fetched message while its handler runs. The consumer's extension tick (every
 * {@code extendEvery}) calls {@link #extend()}, which sends {@code inProgress()} while the message
 * is not settled, so its ack deadline moves; once {@code maxHold} has passed since the fetch it
 * stops, and the message comes back after the ack wait.
 */
final class MessageHold {
  private static final Logger log = LoggerFactory.getLogger(MessageHold.class);

  private final Message message;
  private final long startNanos;
  private final long maxHoldNanos;
  private boolean settled;
  private boolean expired;

  MessageHold(Message message, QueueTimings timings) {
    this.message = message;
    this.startNanos = System.nanoTime(); // monotonic elapsed time, not a clock read
    this.maxHoldNanos = timings.maxHold().toNanos();
  }

  Message message() {
    return message;
  }

  /** True once the hold limit passed: the message must be left for its redelivery. */
  synchronized boolean expired() {
    if (!expired && !settled && System.nanoTime() - startNanos >= maxHoldNanos) {
      expired = true;
      log.warn(
          "hold limit reached on an unsettled message of {}; it will be redelivered",
          message.getSubject());
    }
    return expired;
  }

  /**
   * Acks, naks or terms the message (through {@code action}) and stops extending it, atomically
   * with respect to the extension tick so that no inProgress follows the settle.
   */
  synchronized void settle(Runnable action) {
    settled = true;
    action.run();
  }

  /** The extension tick; returns false once the hold is over (settled or expired). */
  synchronized boolean extend() {
    if (settled || expired()) {
      return false;
    }
    try {
      message.inProgress();
    } catch (RuntimeException e) { // a dropped connection: the redelivery covers it
      log.debug("inProgress failed for {}: {}", message.getSubject(), e.toString());
    }
    return true;
  }
}
