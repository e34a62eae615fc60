package org.rhumbatron.platform.queue;

import java.time.Duration;

/**
 * The queue's retry and dead-letter rule for one message, apart from NATS: given the handler runs
 * counted so far and what the handler said, whether to run it, ack it, nak it with a delay or give
 * it up to the dead-letter queue. {@code retries} retries make {@code retries + 1} runs; {@link
 * #UNSETTLED_ALLOWANCE} more runs reach the handler when earlier ones were never settled.
 */
record DeliveryPolicy(int retries, Duration retryDelay) {

  /**
   * Handler runs past the last retry that still happen, for earlier runs that were never settled
   * (core killed while it held them, an ack lost with the link): a crash or an outage does not
   * spend a command's retries, and a message that kills core each time still ends here.
   */
  static final int UNSETTLED_ALLOWANCE = 3;

  /** What becomes of the message. */
  sealed interface Decision {}

  /** Done: ack it; {@code refusal} is the handler's reason when it refused, else null. */
  record Settle(String refusal) implements Decision {}

  /** Redeliver after {@code delay}. */
  record Redeliver(Duration delay) implements Decision {}

  /** To the dead-letter queue with {@code reason}. */
  record GiveUp(String reason) implements Decision {}

  DeliveryPolicy {
    if (retries < 0) {
      throw new IllegalArgumentException("retries must be >= 0, got " + retries);
    }
  }

  /** Before run number {@code runs}: null to run the handler, or why it is given up unhandled. */
  GiveUp beforeRun(long runs) {
    if (runs <= retries + 1L + UNSETTLED_ALLOWANCE) {
      return null;
    }
    return new GiveUp(
        "handler run "
            + runs
            + " is past the last of "
            + retries
            + " retries and "
            + UNSETTLED_ALLOWANCE
            + " more: earlier runs were not settled in time (ack wait or hold limit)");
  }

  /** After run number {@code runs} ended with {@code outcome}. */
  Decision afterRun(long runs, Outcome outcome) {
    if (outcome instanceof Outcome.Reject reject) {
      return new GiveUp(reject.reason());
    }
    if (outcome instanceof Outcome.Retry retry) {
      if (runs > retries) {
        return new GiveUp(retry.reason());
      }
      return new Redeliver(retry.delay() != null ? retry.delay() : retryDelay);
    }
    if (outcome instanceof Outcome.Refuse refuse) {
      return new Settle(refuse.reason());
    }
    return new Settle(null);
  }
}
