package org.rhumbatron.platform.jetstream;

import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import io.nats.client.Consumer;
import io.nats.client.ErrorListener;
import io.nats.client.JetStreamSubscription;
import io.nats.client.support.Status;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Routes the NATS client's connection events and errors to SLF4J instead of stderr. */
final class Slf4jNatsListener implements ErrorListener, ConnectionListener {
  private static final Logger log = LoggerFactory.getLogger("org.rhumbatron.platform.nats");

  private final String name;
  private final BooleanSupplier connectedOnce;

  Slf4jNatsListener(String name) {
    this(name, () -> true);
  }

  /** Logs the client's exceptions at debug level until {@code connectedOnce} says it connected. */
  Slf4jNatsListener(String name, BooleanSupplier connectedOnce) {
    this.name = name;
    this.connectedOnce = connectedOnce;
  }

  @Override
  public void connectionEvent(Connection conn, Events type) {
    switch (type) {
      case DISCONNECTED -> log.warn("nats connection {}: disconnected", name);
      case CLOSED -> log.info("nats connection {}: closed", name);
      default -> log.info("nats connection {}: {}", name, type.getEvent());
    }
  }

  @Override
  public void errorOccurred(Connection conn, String error) {
    log.error("nats connection {}: server error: {}", name, error);
  }

  @Override
  public void exceptionOccurred(Connection conn, Exception exp) {
    if (!connectedOnce.getAsBoolean()) {
      log.debug("nats connection {}: not connected yet: {}", name, exp.toString());
      return;
    }
    log.error("nats connection {}: {}", name, exp.toString(), exp);
  }

  @Override
  public void slowConsumerDetected(Connection conn, Consumer consumer) {
    log.warn(
        "nats connection {}: slow consumer, {} messages dropped", name, consumer.getDroppedCount());
  }

  @Override
  public void heartbeatAlarm(
      Connection conn,
      JetStreamSubscription sub,
      long lastStreamSequence,
      long lastConsumerSequence) {
    log.warn(
        "nats connection {}: heartbeat alarm (stream seq {}, consumer seq {})",
        name,
        lastStreamSequence,
        lastConsumerSequence);
  }

  @Override
  public void unhandledStatus(Connection conn, JetStreamSubscription sub, Status status) {
    log.warn("nats connection {}: unhandled status {}", name, status);
  }

  @Override
  public void pullStatusError(Connection conn, JetStreamSubscription sub, Status status) {
    log.warn("nats connection {}: pull error {}", name, status);
  }
}
