package org.rhumbatron.platform.queue;

import java.time.Duration;

/**
 * What a queue handler says about one message: {@link Ack} (done), {@link Refuse} (done without
 * doing it, for a reason), {@link Reject} (dead-letter now) or {@link Retry} (redeliver after the
 * delay, or the queue's retry delay when none). A throw is a {@code Retry} with the queue's delay.
 * After the last retry either one goes to the dead-letter queue.
 */
public sealed interface Outcome {

  record Ack() implements Outcome {}

  /**
   * @param delay the redelivery delay, or null for the queue's retry delay
   * @param reason why, kept as the error of a dead letter when this was the last retry
   */
  record Retry(Duration delay, String reason) implements Outcome {}

  /**
   * The message can never succeed (e.g. its payload lacks a field the handler needs): it goes to
   * the dead-letter queue at once with {@code reason}, without the retries that could not help.
   */
  record Reject(String reason) implements Outcome {}

  /**
   * The message is valid but is not carried out any more (e.g. its Project was deleted): it is
   * acknowledged with {@code reason} logged, without retries and without a dead letter, since
   * nothing failed that an operator could fix.
   */
  record Refuse(String reason) implements Outcome {}

  static Outcome ack() {
    return new Ack();
  }

  static Outcome retry() {
    return new Retry(null, "the handler asked for a retry");
  }

  static Outcome retry(Duration delay, String reason) {
    return new Retry(delay, reason);
  }

  static Outcome refuse(String reason) {
    return new Refuse(reason);
  }

  static Outcome reject(String reason) {
    return new Reject(reason);
  }
}
