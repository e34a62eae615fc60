package org.rhumbatron.platform.queue;

/**
 * Hooks of a queue consumer, called on its worker thread after the ack or term. An exception from a
 * hook is logged; it does not change what happened to the message.
 */
public interface QueueListener<T> {

  /** The message was handled and acked (e.g. close the dead letter of the same command). */
  default void succeeded(T message, Delivery delivery) {}

  /**
   * The consumer gave up on the message (e.g. the indexer records the failure in project_indexes).
   * Called before the term for a queue without a dead-letter queue, so the record is not lost.
   */
  default void gaveUp(QueueFailure<T> failure) {}

  static <T> QueueListener<T> none() {
    return new QueueListener<>() {};
  }
}
