package org.rhumbatron.platform.queue;

/**
 * Handles one message of a queue. It returns an {@link Outcome} or throws (a retry after the
 * queue's delay); it never acks itself. Delivery is at least once, so it must be idempotent.
 */
@FunctionalInterface
public interface QueueHandler<T> {
  Outcome handle(T message, Delivery delivery) throws Exception;
}
