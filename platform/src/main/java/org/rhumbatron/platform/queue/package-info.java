/**
 * Commands on JetStream (the seed's "Queues"): {@link org.rhumbatron.platform.queue.Commands}, the
 * public send API that stamps {@code Nats-Msg-Id} = {@code <queue>:<commandId>}, over the byte
 * moving {@link org.rhumbatron.platform.queue.CommandTransport} SPI; and {@link
 * org.rhumbatron.platform.queue.QueueConsumer#runQueueConsumer}, the durable pull consumer {@code
 * q-<queue>} with batch size, concurrency, retries, retry delay and dead-letter queue from a {@link
 * org.rhumbatron.platform.queue.QueueConsumerConfig}, ack extension while a handler holds a batch,
 * and the move of a poison or malformed message to {@code cmd.dead-letter}.
 */
package org.rhumbatron.platform.queue;
