/**
 * Commands on JetStream (the seed's "Queues"): {@link org.rhumbatron.platform.queue.Commands}, the
 * public send API that stamps {@code Nats-Msg-Id} = {@code <queue>:<commandId>}, over the byte
 * moving {@link org.rhumbatron.platform.queue.CommandTransport} SPI; and {@link
 * org.rhumbatron.platform.queue.QueueConsumer#runQueueConsumer}, the durable pull consumer {@code
 * q-<queue>} with batch size, concurrency, retries, retry delay and dead-letter queue from a {@link
 * org.rhumbatron.platform.queue.QueueConsumerConfig}, ack extension while a handler holds a batch,
 * the move of a poison or malformed message to {@code cmd.dead-letter}, and the count of handler
 * runs its retries are spent by ({@link org.rhumbatron.platform.queue.HandlerRuns}, kept in the
 * database by {@link org.rhumbatron.platform.queue.DatabaseHandlerRuns}).
 */
package org.rhumbatron.platform.queue;
