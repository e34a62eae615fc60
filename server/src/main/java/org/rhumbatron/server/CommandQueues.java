package org.rhumbatron.server;

import io.nats.client.Connection;
import java.time.Clock;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.indexer.IndexingFailures;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.queue.CommandTransport;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.platform.queue.DatabaseHandlerRuns;
import org.rhumbatron.platform.queue.Delivery;
import org.rhumbatron.platform.queue.HandlerRuns;
import org.rhumbatron.platform.queue.QueueConsumer;
import org.rhumbatron.platform.queue.QueueFailure;
import org.rhumbatron.platform.queue.QueueHandler;
import org.rhumbatron.platform.queue.QueueListener;
import org.rhumbatron.platform.queue.QueueRuntime;
import org.rhumbatron.platform.queue.QueueTimings;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.router.deadletter.DeadLetterConsumer;
import org.rhumbatron.router.deadletter.DeadLetterOperator;

/**
 * The queues wired from core's pieces: {@link Commands} for every producer, the dead-letter
 * consumer (run at start), the operator service, and {@link #run} for a module's consumer with its
 * row of {@link QueueConsumers}. Only queues with a handler run: a consumer without one would ack
 * work.
 */
final class CommandQueues implements AutoCloseable {
  private final Commands commands;
  private final QueueTimings timings;
  private final EnvelopeCodec codec;
  private final Clock clock;
  private final HandlerRuns handlerRuns;
  private volatile QueueRuntime runtime;
  private final DeadLetterOperator operator;
  private final IndexingFailures indexingFailures;
  private final DeadLetterConsumer deadLetterConsumer;
  private final Settings settings;
  private final List<QueueConsumer<?>> running = new ArrayList<>();
  private final Map<Queue, LongAdder> handled = new EnumMap<>(Queue.class);

  private CommandQueues(
      Commands commands,
      EnvelopeCodec codec,
      QueueTimings timings,
      Clock clock,
      HandlerRuns handlerRuns,
      DeadLetterOperator operator,
      IndexingFailures indexingFailures,
      DeadLetterConsumer deadLetterConsumer,
      Settings settings) {
    this.commands = commands;
    this.codec = codec;
    this.timings = timings;
    this.clock = clock;
    this.handlerRuns = handlerRuns;
    this.operator = operator;
    this.indexingFailures = indexingFailures;
    this.deadLetterConsumer = deadLetterConsumer;
    this.settings = settings;
    for (Queue q : Queue.values()) {
      handled.put(q, new LongAdder());
    }
  }

  /**
   * Builds the queue side over {@code transport} without a connection, so that core can build it
   * while it waits for NATS; {@link #start} runs {@code q-dead-letter} once there is one.
   */
  static CommandQueues create(
      CommandTransport transport,
      Coordinator coordinator,
      Database database,
      Settings settings,
      Clock clock) {
    EnvelopeCodec codec = new EnvelopeCodec();
    Commands commands = new Commands(transport, codec);
    return new CommandQueues(
        commands,
        codec,
        QueueTimings.from(settings),
        clock,
        new DatabaseHandlerRuns(database, clock, settings.get(Settings.COMMAND_STREAM_MAX_AGE)),
        new DeadLetterOperator(database, commands, codec, clock),
        new IndexingFailures(database, clock),
        new DeadLetterConsumer(database, coordinator.changeEvents(), codec, clock),
        settings);
  }

  /**
   * Binds the consumers to {@code nats} and runs the dead-letter consumer ({@code q-dead-letter}).
   */
  void start(Connection nats) {
    runtime = new QueueRuntime(nats, commands, codec, timings, clock, handlerRuns);
    QueueConsumer<?> consumer =
        runtime.runDeadLetterConsumer(
            QueueConsumers.of(Queue.DEAD_LETTER, settings), deadLetterConsumer, deadLetterConsumer);
    synchronized (running) {
      running.add(consumer);
    }
  }

  Commands commands() {
    return commands;
  }

  DeadLetterOperator deadLetters() {
    return operator;
  }

  /** Retries (naks with a delay) of {@code queue}'s running consumers since start. */
  long retries(Queue queue) {
    synchronized (running) {
      return running.stream()
          .filter(c -> c.config().queue() == queue)
          .mapToLong(QueueConsumer::retryCount)
          .sum();
    }
  }

  /** Commands {@code queue}'s consumers handled (acked as done) since start. */
  long handled(Queue queue) {
    return handled.get(queue).sum();
  }

  /**
   * Runs the indexer's consumer of the indexing queue, which has no dead-letter queue: a command it
   * gives up on is recorded as a failed row of {@code project_indexes}.
   */
  QueueConsumer<Command> runIndexer(QueueHandler<Command> handler) {
    return run(Queue.INDEXING, handler, indexingFailures);
  }

  /**
   * Runs {@code queue}'s consumer with its table row and {@code handler}; a success also closes the
   * command's dead letter, and {@code hooks} (e.g. the indexer's failure record) see the rest.
   */
  QueueConsumer<Command> run(
      Queue queue, QueueHandler<Command> handler, QueueListener<Command> hooks) {
    QueueListener<Command> success = operator.successHook();
    QueueListener<Command> extra = hooks == null ? QueueListener.none() : hooks;
    if (runtime == null) {
      throw new IllegalStateException("the queues run once core is connected to NATS");
    }
    QueueConsumer<Command> consumer =
        runtime.runQueueConsumer(
            QueueConsumers.of(queue, settings),
            handler,
            new QueueListener<>() {
              @Override
              public void succeeded(Command command, Delivery delivery) {
                handled.get(queue).increment();
                success.succeeded(command, delivery);
                extra.succeeded(command, delivery);
              }

              @Override
              public void gaveUp(QueueFailure<Command> failure) {
                extra.gaveUp(failure);
              }
            });
    synchronized (running) {
      running.add(consumer);
    }
    return consumer;
  }

  /**
   * Closes {@code queue}'s running consumers: its Commands wait on the stream from now on, and its
   * consumer lag grows (what the dashboard test shows).
   */
  void stop(Queue queue) {
    synchronized (running) {
      running.removeIf(
          c -> {
            if (c.config().queue() != queue) {
              return false;
            }
            c.close();
            return true;
          });
    }
  }

  /** How many consumers run now: a mark for {@link #closeSince}. */
  int runningCount() {
    synchronized (running) {
      return running.size();
    }
  }

  /** Closes the consumers started after {@code mark}, e.g. by a start that failed half way. */
  void closeSince(int mark) {
    synchronized (running) {
      List<QueueConsumer<?>> started = running.subList(mark, running.size());
      started.forEach(QueueConsumer::close);
      started.clear();
    }
  }

  @Override
  public void close() {
    synchronized (running) {
      running.forEach(QueueConsumer::close);
      running.clear();
    }
  }
}
