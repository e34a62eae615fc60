package org.rhumbatron.platform.queue;

import io.nats.client.Message;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One worker's hold on a fetched batch: every {@code extendEvery} it sends {@code inProgress()} for
 * each message not yet settled, so the ack deadline moves while the handler works through the
 * batch; after {@code maxHold} it stops, and the unsettled messages come back after the ack wait.
 */
final class BatchHold implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(BatchHold.class);

  private final List<Message> open;
  private final ScheduledFuture<?> ticks;
  private final ScheduledFuture<?> limit;
  private volatile boolean expired;

  BatchHold(List<Message> batch, QueueTimings timings, ScheduledExecutorService scheduler) {
    this.open = new ArrayList<>(batch);
    long every = timings.extendEvery().toMillis();
    this.ticks = scheduler.scheduleAtFixedRate(this::extend, every, every, TimeUnit.MILLISECONDS);
    this.limit =
        scheduler.schedule(this::expire, timings.maxHold().toMillis(), TimeUnit.MILLISECONDS);
  }

  /** True once the hold limit passed: the worker must leave the rest of the batch alone. */
  boolean expired() {
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

  private void extend() {
    synchronized (open) {
      if (expired) {
        return;
      }
      for (Message m : open) {
        try {
          m.inProgress();
        } catch (RuntimeException e) { // a dropped connection: the redelivery covers it
          log.debug("inProgress failed for {}: {}", m.getSubject(), e.toString());
        }
      }
    }
  }

  private void expire() {
    expired = true;
    ticks.cancel(false);
    synchronized (open) {
      if (!open.isEmpty()) {
        log.warn(
            "hold limit reached with {} unsettled messages on {}; they will be redelivered",
            open.size(),
            open.get(0).getSubject());
      }
    }
  }

  @Override
  public void close() {
    ticks.cancel(false);
    limit.cancel(false);
  }
}
