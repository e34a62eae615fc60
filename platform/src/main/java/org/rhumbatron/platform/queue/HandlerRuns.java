package org.rhumbatron.platform.queue;

import org.rhumbatron.protocol.Queue;

/**
 * Counts the deliveries of a message that reached its handler, for the give-up decisions of {@link
 * QueueConsumer}: the server's delivered count also counts deliveries that never reached core (a
 * stalled link, a delivery sent to a consumer that was gone), so it can spend a command's retries
 * without a handler run. A message is {@code queue} and its sequence on {@code COMMANDS}.
 */
public interface HandlerRuns {

  /**
   * Counts the handler run that a delivery starts and returns it: 1 for the server's first delivery
   * (nothing is written), else 1 + the redeliveries counted for the message so far, this one
   * included. Called before the handler runs, so a run that kills core still counts.
   *
   * @throws RuntimeException when the count cannot be kept; the caller then uses the server's count
   */
  long countRun(Queue queue, long streamSequence, long serverDeliveredCount);

  /** Forgets the message once it is acked or terminated; only needed after a redelivery. */
  void settled(Queue queue, long streamSequence);

  /**
   * Deletes what is left of messages that can no longer be in the stream; cheap, called on start.
   */
  void purgeExpired(Queue queue);

  /** Trusts the server's delivered count: for tools and tests that keep no database. */
  static HandlerRuns serverCount() {
    return ServerCount.INSTANCE;
  }

  /** {@link #serverCount()}. */
  enum ServerCount implements HandlerRuns {
    INSTANCE;

    @Override
    public long countRun(Queue queue, long streamSequence, long serverDeliveredCount) {
      return serverDeliveredCount;
    }

    @Override
    public void settled(Queue queue, long streamSequence) {}

    @Override
    public void purgeExpired(Queue queue) {}
  }
}
