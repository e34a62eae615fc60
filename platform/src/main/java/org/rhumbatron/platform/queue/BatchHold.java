package org.rhumbatron.platform.queue;

import io.nats.client.Message;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One worker's hold on a fetched batch. The consumer's extension tick (every {@code extendEvery})
 * calls {@link #extend()}, which sends {@code inProgress()} for each message not yet settled, so
 * the ack deadline moves while the handler works through the batch; once {@code maxHold} has passed
 * since the fetch it stops, and the unsettled messages come back after the ack wait.
 */
final class BatchHold {
  private static final Logger log = LoggerFactory.getLogger(BatchHold.class);

  private final List<Message> open;
  private final long startNanos;
  private final long maxHoldNanos;
  private volatile boolean expired;

  BatchHold(List<Message> batch, QueueTimings timings) {
    this.open = new ArrayList<>(batch);
    this.startNanos = System.nanoTime(); // monotonic elapsed time, not a clock read
    this.maxHoldNanos = timings.maxHold().toNanos();
  }

  /** True once the hold limit passed: the worker must leave the rest of the batch alone. */
  boolean expired() {
    if (!expired && System.nanoTime() - startNanos >= maxHoldNanos) {
      expire();
    }
    return expired;
  }

  /**
   * Acks, naks or terms {@code m} (through {@code action}) and stops extending it, atomically with
   * respect to the extension tick so that no inProgress follows the settle.
   */
  void settle(Message m, Runnable action) {
    synchronized (open) {
      open.remove(m);
      action.run();
    }
  }

  /** The extension tick; returns false once the hold is over (expired), so the tick drops it. */
  boolean extend() {
    if (expired()) {
      return false;
    }
    synchronized (open) {
      for (Message m : open) {
        try {
          m.inProgress();
        } catch (RuntimeException e) { // a dropped connection: the redelivery covers it
          log.debug("inProgress failed for {}: {}", m.getSubject(), e.toString());
        }
      }
    }
    return true;
  }

  private void expire() {
    expired = true;
    synchronized (open) {
      if (!open.isEmpty()) {
        log.warn(
            "hold limit reached with {} unsettled messages on {}; they will be redelivered",
            open.size(),
            open.get(0).getSubject());
      }
    }
  }
}
