package org.rhumbatron.platform.queue;

import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PullRequestOptions;
import io.nats.client.PullSubscribeOptions;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.DeliverPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.rhumbatron.platform.concurrent.DaemonThreads;
import org.rhumbatron.protocol.Queue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running durable consumer {@code q-<queue>}: {@code concurrency} workers, each holding a batch
 * of up to {@code batchSize} messages. The messages of a batch are independent commands: each runs
 * its handler at once on a thread of its own and is settled when that handler ends, under its own
 * {@link MessageHold} (ack extension, hold limit). A worker pulls for the places its settled
 * messages freed, so a slow handler holds only its own message; at most {@code batchSize x
 * concurrency} messages are in the handlers at once, as with that many batches in flight.
 *
 * <p>Per message: a body that does not decode goes to the dead-letter queue at once (never retried;
 * logged and terminated on a queue without one). A handler's {@link Outcome.Ack} acks, an {@link
 * Outcome.Reject} goes to the dead-letter queue at once; a {@link Outcome.Retry} or a throw naks
 * with the delay (never a plain nak), until the handler run after the last retry: that one goes to
 * the dead-letter queue and is terminated. A run that ends unsettled (core killed, an ack lost)
 * counts too; {@link DeliveryPolicy#UNSETTLED_ALLOWANCE} more such runs reach the handler before
 * the message goes to the dead-letter queue unhandled. Runs, not the server's deliveries, are
 * counted ({@link HandlerRuns}): the server also counts deliveries that never reached core, e.g.
 * over a stalled link. The server's max_deliver is unlimited on purpose: a message the server stops
 * delivering stays in the work-queue stream unsettled and never reaches the dead-letter queue.
 */
public final class QueueConsumer<T> implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(QueueConsumer.class);

  /** How long a pull stays open on the server; its messages are handled as they arrive. */
  private static final Duration FETCH_WAIT = Duration.ofMillis(250);

  /** How much longer than the pull a worker waits for the server's end of it. */
  private static final Duration PULL_END_MARGIN = Duration.ofSeconds(1);

  private static final Duration IDLE_HANDLER_THREAD = Duration.ofSeconds(60);
  private static final Duration FETCH_ERROR_PAUSE = Duration.ofMillis(500);
  private static final Duration CLOSE_WAIT = Duration.ofSeconds(5);
  private static final Duration UNREAD_WAIT = Duration.ofMillis(1);

  private final QueueRuntime runtime;
  private final QueueConsumerConfig config;
  private final MessageSettler<T> settler;
  private final ExecutorService workers;
  private final ScheduledExecutorService extender;
  private final List<JetStreamSubscription> subscriptions = new ArrayList<>();
  private final ThreadPoolExecutor handlers;
  private final Set<MessageHold> holds = ConcurrentHashMap.newKeySet();
  private final List<Worker> batches = new ArrayList<>();
  private volatile boolean open = true;

  private QueueConsumer(
      QueueRuntime runtime, QueueConsumerConfig config, MessageSettler<T> settler) {
    this.runtime = runtime;
    this.config = config;
    this.settler = settler;
    String name = config.queue().durableName();
    this.workers = Executors.newFixedThreadPool(config.concurrency(), DaemonThreads.named(name));
    int places = config.batchSize() * config.concurrency();
    this.handlers =
        new ThreadPoolExecutor(
            places,
            places,
            IDLE_HANDLER_THREAD.toMillis(),
            TimeUnit.MILLISECONDS,
            new LinkedBlockingQueue<>(),
            DaemonThreads.named(name + "-handle"));
    this.handlers.allowCoreThreadTimeOut(true); // an idle queue keeps no threads
    this.extender =
        Executors.newSingleThreadScheduledExecutor(DaemonThreads.named(name + "-extend"));
  }

  static <T> QueueConsumer<T> start(
      QueueRuntime runtime,
      QueueConsumerConfig config,
      String kind,
      Function<byte[], T> decoder,
      QueueHandler<T> handler,
      QueueListener<T> listener) {
    QueueConsumer<T> consumer =
        new QueueConsumer<>(
            runtime,
            config,
            new MessageSettler<>(
                runtime,
                config,
                kind,
                decoder,
                handler,
                listener == null ? QueueListener.none() : listener));
    try {
      consumer.bind();
    } catch (RuntimeException e) {
      consumer.close();
      throw e;
    }
    return consumer;
  }

  /** The durable consumer's configuration for {@code config} and {@code timings}. */
  public static ConsumerConfiguration consumerConfiguration(
      QueueConsumerConfig config, QueueTimings timings) {
    int inFlight = config.batchSize() * config.concurrency();
    return ConsumerConfiguration.builder()
        .durable(config.queue().durableName())
        .ackPolicy(AckPolicy.Explicit)
        .ackWait(timings.ackWait())
        .deliverPolicy(DeliverPolicy.All)
        .filterSubject(config.queue().subject())
        .maxDeliver(-1) // deliveries are counted here; see the class comment
        .maxAckPending(Math.max(1_000, inFlight * 2))
        .build();
  }

  private void bind() {
    Queue queue = config.queue();
    try {
      runtime
          .connection()
          .jetStreamManagement()
          .addOrUpdateConsumer(Queue.STREAM_NAME, consumerConfiguration(config, runtime.timings()));
      for (int i = 0; i < config.concurrency(); i++) {
        JetStreamSubscription sub =
            runtime
                .connection()
                .jetStream()
                .subscribe(
                    queue.subject(),
                    PullSubscribeOptions.bind(Queue.STREAM_NAME, queue.durableName()));
        subscriptions.add(sub);
        batches.add(new Worker(sub, config.batchSize()));
      }
    } catch (IOException | JetStreamApiException e) {
      throw new QueueException(queue, "cannot create or bind the consumer: " + e.getMessage(), e);
    }
    long every = runtime.timings().extendEvery().toMillis();
    // One tick for every message held: cheaper than a timer per message at thousands of messages
    // a second.
    extender.scheduleAtFixedRate(this::extendHolds, every, every, TimeUnit.MILLISECONDS);
    batches.forEach(worker -> workers.execute(() -> work(worker)));
    try {
      runtime.handlerRuns().purgeExpired(queue);
    } catch (RuntimeException e) { // the rows wait for the next start
      log.warn("purge of old handler runs of {} failed: {}", queue.durableName(), e.toString());
    }
    log.info(
        "queue consumer {} runs: batch {}, concurrency {}, retries {}, retry delay {}, dead-letter"
            + " queue {}",
        queue.durableName(),
        config.batchSize(),
        config.concurrency(),
        config.retries(),
        config.retryDelay(),
        config.hasDeadLetterQueue() ? config.deadLetterQueue().wireName() : "none");
  }

  public QueueConsumerConfig config() {
    return config;
  }

  /** Naks with a delay since start: a handler's retry or throw, or a dead letter not sent. */
  public long retryCount() {
    return settler.retryCount();
  }

  /**
   * One worker: keeps up to {@code batchSize} messages of its subscription in its handlers and
   * pulls for the free ones, so a slow handler holds only its own message's place.
   */
  private void work(Worker worker) {
    while (open) {
      int free = worker.awaitFree();
      if (free == 0) {
        return; // closing
      }
      try {
        pullAndStart(worker, free);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        if (!open) {
          return;
        }
        log.warn("fetch from {} failed: {}", config.queue().durableName(), e.toString());
        if (!pause(FETCH_ERROR_PAUSE)) {
          return;
        }
      }
    }
  }

  /**
   * Pulls up to {@code free} messages and starts each one's handler as soon as it arrives: the pull
   * stays open until it has them all or the server ends it ({@link #FETCH_WAIT}), but no message
   * waits for the rest of its batch.
   */
  private void pullAndStart(Worker worker, int free) throws InterruptedException {
    JetStreamSubscription sub = worker.subscription;
    sub.pull(PullRequestOptions.builder(free).expiresIn(FETCH_WAIT).build());
    long deadline = System.nanoTime() + FETCH_WAIT.plus(PULL_END_MARGIN).toNanos();
    for (int got = 0; got < free && open; got++) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return;
      }
      // null: the server ended the pull (its expiry), or the margin ran out
      Message m = sub.nextMessage(Duration.ofNanos(left));
      if (m == null) {
        return;
      }
      start(worker, m);
    }
  }

  /** Hands {@code m} to a handler thread under its own hold; settled when its handler ends. */
  private void start(Worker worker, Message m) {
    MessageHold hold = new MessageHold(m, runtime.timings());
    worker.taken();
    holds.add(hold);
    try {
      handlers.execute(() -> run(worker, hold));
    } catch (RejectedExecutionException closing) {
      holds.remove(hold);
      release(hold);
      worker.done();
    }
  }

  private void run(Worker worker, MessageHold hold) {
    try {
      if (!open) {
        release(hold);
      } else if (!hold.expired()) { // else it comes back after the ack wait
        settler.handle(hold);
      }
    } catch (RuntimeException e) { // a bug here must not stop the consumer
      log.error("queue {}: unexpected error, message left for redelivery", config.queue(), e);
    } finally {
      holds.remove(hold);
      worker.done();
    }
  }

  /**
   * Gives back a message this consumer took but will not handle, as it closes: a nak redelivers it
   * at once, to another node's consumer, instead of after the ack wait.
   */
  private static void release(MessageHold hold) {
    hold.settle(
        () -> {
          try {
            hold.message().nak();
          } catch (RuntimeException e) { // the connection may be closed: the ack wait covers it
            log.debug("nak on close failed: {}", e.toString());
          }
        });
  }

  /** Naks the messages a pull delivered that no worker read before the consumer closed. */
  private static void releaseUnread(JetStreamSubscription sub) {
    try {
      for (Message m = sub.nextMessage(UNREAD_WAIT); m != null; m = sub.nextMessage(UNREAD_WAIT)) {
        if (m.isJetStream()) {
          m.nak();
        }
      }
    } catch (RuntimeException
        | InterruptedException e) { // closed meanwhile: the ack wait covers it
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      log.debug("releasing unread messages failed: {}", e.toString());
    }
  }

  private void extendHolds() {
    try {
      holds.removeIf(hold -> !hold.extend());
    } catch (RuntimeException e) { // the tick must keep running
      log.warn("ack extension on {} failed: {}", config.queue().durableName(), e.toString());
    }
  }

  private boolean pause(Duration d) {
    try {
      Thread.sleep(d.toMillis());
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * A worker's places: messages handed to handlers and not yet done, at most {@code batchSize}
   * before it pulls again.
   */
  private final class Worker {
    final JetStreamSubscription subscription;
    private final int batchSize;
    private int held;

    Worker(JetStreamSubscription subscription, int batchSize) {
      this.subscription = subscription;
      this.batchSize = batchSize;
    }

    /** Waits for a free place; returns how many are free, or 0 once the consumer closes. */
    synchronized int awaitFree() {
      while (open && held >= batchSize) {
        try {
          wait();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return 0;
        }
      }
      return open ? batchSize - held : 0;
    }

    synchronized void taken() {
      held++;
    }

    synchronized void done() {
      held--;
      notifyAll();
    }

    synchronized void wake() {
      notifyAll();
    }
  }

  /**
   * Stops fetching, lets running handlers finish (up to 5 s), gives back what it took and did not
   * start (another node's consumer gets it at once), and unbinds.
   */
  @Override
  public void close() {
    open = false;
    batches.forEach(Worker::wake);
    workers.shutdown();
    handlers.shutdown();
    long deadline = System.nanoTime() + CLOSE_WAIT.toNanos();
    try {
      for (ExecutorService pool : List.of(workers, handlers)) {
        long left = deadline - System.nanoTime();
        if (!pool.awaitTermination(Math.max(0, left), TimeUnit.NANOSECONDS)) {
          pool.shutdownNow();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      workers.shutdownNow();
      handlers.shutdownNow();
    }
    for (JetStreamSubscription sub : subscriptions) {
      releaseUnread(sub);
      try {
        sub.unsubscribe();
      } catch (RuntimeException e) { // the connection may be closed already
        log.debug("unsubscribe of {} failed: {}", config.queue().durableName(), e.toString());
      }
    }
    extender.shutdownNow();
  }
}
