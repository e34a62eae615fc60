package org.rhumbatron.platform.queue;

import io.nats.client.Message;
import io.nats.client.impl.NatsJetStreamMetaData;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import org.rhumbatron.protocol.DeadLetterMessage;
import org.rhumbatron.protocol.EnvelopeException;
import org.rhumbatron.protocol.Headers;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One held message of a {@link QueueConsumer}, from decode to settle: counts the handler run, runs
 * the handler, and acks, naks with a delay or dead-letters as the {@link DeliveryPolicy} decides.
 */
final class MessageSettler<T> {
  private static final Logger log = LoggerFactory.getLogger(QueueConsumer.class);
  private static final Duration DEAD_LETTER_SEND_TIMEOUT = Duration.ofSeconds(10);

  private final QueueRuntime runtime;
  private final QueueConsumerConfig config;
  private final DeliveryPolicy policy;
  private final String kind;
  private final Function<byte[], T> decoder;
  private final QueueHandler<T> handler;
  private final QueueListener<T> listener;
  private final LongAdder retries = new LongAdder();
  private final FirstRuns firstRuns = new FirstRuns();

  MessageSettler(
      QueueRuntime runtime,
      QueueConsumerConfig config,
      String kind,
      Function<byte[], T> decoder,
      QueueHandler<T> handler,
      QueueListener<T> listener) {
    this.runtime = runtime;
    this.config = config;
    this.policy = new DeliveryPolicy(config.retries(), config.retryDelay());
    this.kind = kind;
    this.decoder = decoder;
    this.handler = handler;
    this.listener = listener;
  }

  /** Naks with a delay since start: a handler's retry or throw, or a dead letter not sent. */
  long retryCount() {
    return retries.sum();
  }

  /** Handles and settles the message under its "handle" span, current while the handler runs. */
  void handle(MessageHold hold) {
    Span span = HandleSpans.start(config.queue(), hold.message());
    try (Scope scope = span.makeCurrent()) {
      handle(hold, span);
    } catch (RuntimeException e) {
      span.setStatus(StatusCode.ERROR, e.toString());
      throw e;
    } finally {
      span.end();
    }
  }

  private void handle(MessageHold hold, Span span) {
    Message m = hold.message();
    Delivery delivery = delivery(m);
    byte[] body = m.getData() == null ? new byte[0] : m.getData();
    T message;
    try {
      message = decoder.apply(body);
    } catch (EnvelopeException e) {
      giveUp(m, hold, delivery, null, body, "malformed " + kind + " envelope: " + e.getMessage());
      return;
    }
    HandleSpans.decoded(span, message);
    delivery = counted(delivery);
    DeliveryPolicy.GiveUp unhandled = policy.beforeRun(delivery.deliveredCount());
    if (unhandled != null) {
      giveUp(m, hold, delivery, message, body, unhandled.reason());
      return;
    }
    Outcome outcome = run(message, delivery);
    HandleSpans.outcome(span, outcome);
    if (hold.expired()) {
      log.warn(
          "handler of {} on {} finished after the hold limit; the message is redelivered",
          delivery.messageId(),
          config.queue().durableName());
      return;
    }
    DeliveryPolicy.Decision decision = policy.afterRun(delivery.deliveredCount(), outcome);
    if (decision instanceof DeliveryPolicy.GiveUp giveUp) {
      giveUp(m, hold, delivery, message, body, giveUp.reason());
    } else if (decision instanceof DeliveryPolicy.Redeliver redeliver) {
      retries.increment();
      // A retry holds its Command back for the whole delay: the log says for how long and why.
      log.info(
          "{} on {}: handler run {} asked for a retry, redelivery in {}: {}",
          delivery.messageId(),
          config.queue().wireName(),
          delivery.deliveredCount(),
          redeliver.delay(),
          outcome instanceof Outcome.Retry retry ? retry.reason() : outcome);
      hold.settle(() -> m.nakWithDelay(redeliver.delay()));
    } else if (decision instanceof DeliveryPolicy.Settle settle) {
      if (settle.refusal() != null) {
        log.info(
            "refused {} on {}: {}",
            delivery.messageId(),
            config.queue().wireName(),
            settle.refusal());
      }
      settleForGood(m, hold, delivery, m::ack);
      try {
        listener.succeeded(message, delivery);
      } catch (RuntimeException e) {
        log.warn("success hook of {} failed: {}", delivery.messageId(), e.toString());
      }
    }
  }

  /** The handler's outcome; a throw or no outcome is a retry with the queue's delay. */
  private Outcome run(T message, Delivery delivery) {
    try {
      Outcome outcome = handler.handle(message, delivery);
      return outcome != null ? outcome : Outcome.retry(null, "the handler returned no outcome");
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      return Outcome.retry(null, describe(e));
    }
  }

  private void giveUp(
      Message m, MessageHold hold, Delivery delivery, T message, byte[] body, String reason) {
    String original = new String(body, StandardCharsets.UTF_8);
    QueueFailure<T> failure =
        new QueueFailure<>(delivery, message, original, reason, config.hasDeadLetterQueue());
    if (config.hasDeadLetterQueue()) {
      if (!sendToDeadLetter(delivery, original, reason)) {
        retries.increment();
        hold.settle(() -> m.nakWithDelay(config.retryDelay()));
        return;
      }
      settleForGood(m, hold, delivery, m::term);
      log.warn(
          "dead-lettered {} (sequence {}) from {} after {} handler runs ({} deliveries): {}",
          delivery.messageId(),
          delivery.streamSequence(),
          config.queue().wireName(),
          delivery.deliveredCount(),
          delivery.serverDeliveredCount(),
          reason);
      notifyGaveUp(failure);
      return;
    }
    log.error(
        "giving up on {} (sequence {}) of {} after {} handler runs ({} deliveries); the queue"
            + " has no dead-letter queue, so it is terminated: {} (body: {})",
        delivery.messageId(),
        delivery.streamSequence(),
        config.queue().wireName(),
        delivery.deliveredCount(),
        delivery.serverDeliveredCount(),
        reason,
        original.length() > 500 ? original.substring(0, 500) + "..." : original);
    notifyGaveUp(failure); // before the term: e.g. the indexer's failure record
    settleForGood(m, hold, delivery, m::term);
  }

  /**
   * {@code delivery} counted as a handler run; a repeated first delivery counts as a redelivery
   * (see {@link FirstRuns}). When the count cannot be kept (database down) the server's count
   * stands in, so that the queue still flows.
   */
  private Delivery counted(Delivery delivery) {
    long serverCount = delivery.serverDeliveredCount();
    if (serverCount <= 1 && !firstRuns.first(delivery.streamSequence())) {
      serverCount = 2;
    }
    try {
      return delivery.withHandlerRuns(
          runtime.handlerRuns().countRun(config.queue(), delivery.streamSequence(), serverCount));
    } catch (RuntimeException e) {
      log.warn(
          "cannot count the handler runs of {} (sequence {}) on {}, using the server's count {}:"
              + " {}",
          delivery.messageId(),
          delivery.streamSequence(),
          config.queue().wireName(),
          delivery.serverDeliveredCount(),
          e.toString());
      return delivery;
    }
  }

  /** Acks or terms {@code m} and forgets its handler runs (only a redelivery recorded any). */
  private void settleForGood(Message m, MessageHold hold, Delivery delivery, Runnable action) {
    hold.settle(action);
    firstRuns.forget(delivery.streamSequence());
    if (delivery.deliveredCount() <= 1 && delivery.serverDeliveredCount() <= 1) {
      return;
    }
    try {
      runtime.handlerRuns().settled(config.queue(), delivery.streamSequence());
    } catch (RuntimeException e) { // the row goes with the purge of old rows
      log.warn(
          "cannot forget the handler runs of {} (sequence {}) on {}: {}",
          delivery.messageId(),
          delivery.streamSequence(),
          config.queue().wireName(),
          e.toString());
    }
  }

  private boolean sendToDeadLetter(Delivery delivery, String original, String reason) {
    DeadLetterMessage dl =
        new DeadLetterMessage(
            config.queue(),
            (int) Math.min(Integer.MAX_VALUE, delivery.deliveredCount()),
            reason,
            original,
            runtime.clock().instant());
    try {
      runtime
          .commands()
          .sendDeadLetter(dl, delivery.streamSequence())
          .get(DEAD_LETTER_SEND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      log.error(
          "cannot dead-letter {} of {}, redelivering it after {}: {}",
          delivery.messageId(),
          config.queue().wireName(),
          config.retryDelay(),
          e.toString());
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private void notifyGaveUp(QueueFailure<T> failure) {
    try {
      listener.gaveUp(failure);
    } catch (RuntimeException e) {
      log.warn("failure hook of {} failed: {}", failure.delivery().messageId(), e.toString());
    }
  }

  private Delivery delivery(Message m) {
    NatsJetStreamMetaData meta = m.metaData();
    String msgId = m.getHeaders() == null ? null : m.getHeaders().getFirst(Headers.MSG_ID);
    return new Delivery(
        config.queue(),
        meta.deliveredCount(),
        meta.streamSequence(),
        meta.timestamp().toInstant(),
        msgId);
  }

  /** The error text kept in a dead letter: the exception and its causes, without stack frames. */
  static String describe(Throwable e) {
    StringBuilder text = new StringBuilder(String.valueOf(e));
    for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
      text.append("; caused by ").append(c);
    }
    return text.toString();
  }
}
