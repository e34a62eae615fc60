package org.rhumbatron.platform.queue;

import io.nats.client.Connection;
import java.time.Clock;
import java.util.Objects;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.DeadLetterMessage;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Queue;

/**
 * What every queue consumer shares: the connection, {@link Commands} (for the dead-letter sends),
 * the codec, the ack timings, the clock and the {@link HandlerRuns} count. {@link
 * #runQueueConsumer} starts one consumer.
 */
public final class QueueRuntime {
  private final Connection connection;
  private final Commands commands;
  private final EnvelopeCodec codec;
  private final QueueTimings timings;
  private final Clock clock;
  private final HandlerRuns handlerRuns;

  public QueueRuntime(
      Connection connection,
      Commands commands,
      EnvelopeCodec codec,
      QueueTimings timings,
      Clock clock,
      HandlerRuns handlerRuns) {
    this.connection = Objects.requireNonNull(connection, "connection");
    this.commands = Objects.requireNonNull(commands, "commands");
    this.codec = Objects.requireNonNull(codec, "codec");
    this.timings = Objects.requireNonNull(timings, "timings");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.handlerRuns = Objects.requireNonNull(handlerRuns, "handlerRuns");
  }

  /**
   * The seed's {@code runQueueConsumer}: creates (or updates) the durable consumer {@code
   * q-<queue>} and runs {@code config.concurrency()} workers on it until {@link
   * QueueConsumer#close()}.
   *
   * @throws IllegalArgumentException for the dead-letter queue, whose messages are not Commands
   *     (see {@link #runDeadLetterConsumer})
   * @throws QueueException when the consumer cannot be created or bound
   */
  public QueueConsumer<Command> runQueueConsumer(
      QueueConsumerConfig config, QueueHandler<Command> handler, QueueListener<Command> listener) {
    if (config.queue() == Queue.DEAD_LETTER) {
      throw new IllegalArgumentException(
          "the dead-letter queue carries dead-letter messages: use runDeadLetterConsumer");
    }
    return QueueConsumer.start(this, config, "command", codec::decodeCommand, handler, listener);
  }

  /** {@link #runQueueConsumer} for {@code cmd.dead-letter}, whose messages are dead letters. */
  public QueueConsumer<DeadLetterMessage> runDeadLetterConsumer(
      QueueConsumerConfig config,
      QueueHandler<DeadLetterMessage> handler,
      QueueListener<DeadLetterMessage> listener) {
    if (config.queue() != Queue.DEAD_LETTER) {
      throw new IllegalArgumentException(
          "runDeadLetterConsumer reads only the dead-letter queue, not " + config.queue());
    }
    return QueueConsumer.start(
        this, config, "dead-letter", codec::decodeDeadLetter, handler, listener);
  }

  public Commands commands() {
    return commands;
  }

  Connection connection() {
    return connection;
  }

  QueueTimings timings() {
    return timings;
  }

  Clock clock() {
    return clock;
  }

  HandlerRuns handlerRuns() {
    return handlerRuns;
  }
}
