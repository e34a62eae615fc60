package org.rhumbatron.platform.queue;

import java.time.Duration;
import org.rhumbatron.platform.config.Settings;

/**
 * How long a delivery may stay unacknowledged: the consumer's ack wait, the ack extension while a
 * handler runs (seed: every 30 s) and the hold limit after which extension stops (seed: 15 min).
 */
public record QueueTimings(Duration ackWait, Duration extendEvery, Duration maxHold) {

  public QueueTimings {
    if (extendEvery.compareTo(ackWait) >= 0 || maxHold.compareTo(extendEvery) <= 0) {
      throw new IllegalArgumentException(
          "need extendEvery < ackWait and maxHold > extendEvery, got ack wait "
              + ackWait
              + ", extend every "
              + extendEvery
              + ", max hold "
              + maxHold);
    }
  }

  public static QueueTimings from(Settings settings) {
    return new QueueTimings(
        settings.get(Settings.QUEUE_ACK_WAIT),
        settings.get(Settings.ACK_EXTEND_EVERY),
        settings.get(Settings.MAX_HOLD));
  }
}
