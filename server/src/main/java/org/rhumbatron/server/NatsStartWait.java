package org.rhumbatron.server;

import io.nats.client.Connection;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.rhumbatron.platform.concurrent.DaemonThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Core started while NATS did not answer: on a thread of its own it tries to connect every {@link
 * #TRY_EVERY}, says that it waits at most every {@link #LOG_EVERY}, and then starts {@link
 * NatsSide} on the connection, again after a failed try, until it is up.
 */
final class NatsStartWait implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(NatsStartWait.class);
  static final Duration LOG_EVERY = Duration.ofSeconds(30);
  static final Duration TRY_EVERY = Duration.ofSeconds(1);

  /** One connect attempt, e.g. {@code JetStreamConnections.tryConnect}. */
  interface Connector {
    Connection connect() throws java.io.IOException, InterruptedException;
  }

  private final Connector connector;
  private final String shownUrl;
  private final NatsSide side;
  private final Clock clock;
  private final Thread thread;
  private volatile boolean stopped;
  private Instant nextLog;

  private final Connection connected;

  private NatsStartWait(
      Connector connector,
      String shownUrl,
      NatsSide side,
      Clock clock,
      Instant nextLog,
      Connection connected) {
    this.connected = connected;
    this.connector = connector;
    this.shownUrl = shownUrl;
    this.side = side;
    this.clock = clock;
    this.nextLog = nextLog;
    this.thread = DaemonThreads.named("nats-start-wait").newThread(this::run);
  }

  /**
   * Starts waiting after the first failed attempt, {@code firstFailure}, which it logs now: the one
   * line a reader of the start finds. {@code connected} is a connection that answered but whose
   * start failed (the tries go on with it), or null.
   */
  static NatsStartWait start(
      Connector connector,
      String shownUrl,
      NatsSide side,
      Clock clock,
      Exception firstFailure,
      Connection connected) {
    log.warn(
        "core waits for NATS at {} ({}); state changes commit and their Events wait in the outbox",
        shownUrl,
        firstFailure.getMessage());
    NatsStartWait wait =
        new NatsStartWait(
            connector, shownUrl, side, clock, clock.instant().plus(LOG_EVERY), connected);
    wait.thread.start();
    return wait;
  }

  private void run() {
    Connection connection = connected;
    while (!stopped) {
      try {
        if (connection == null) {
          connection = connector.connect();
        }
        int resumed = side.start(connection);
        log.info(
            "NATS at {} is connected: core made its streams and started its queues and router;"
                + " {} streams resume publishing",
            shownUrl,
            resumed);
        return;
      } catch (InterruptedException e) {
        break;
      } catch (Exception e) {
        if (stopped) {
          break;
        }
        logAtMostEvery(connection == null ? "not connected yet" : "no start yet", e);
      }
      try {
        Thread.sleep(TRY_EVERY.toMillis());
      } catch (InterruptedException e) {
        break;
      }
    }
    if (connection != null && side.connection() != connection) {
      closeQuietly(connection); // core is stopping before the side took it
    }
  }

  private void logAtMostEvery(String what, Exception e) {
    Instant now = clock.instant();
    if (!now.isBefore(nextLog)) {
      log.warn("core still waits for NATS at {}: {} ({})", shownUrl, what, e.getMessage());
      nextLog = now.plus(LOG_EVERY);
    }
  }

  private static void closeQuietly(Connection connection) {
    try {
      connection.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Stops waiting (core is stopping); a start in progress ends first. */
  @Override
  public void close() {
    stopped = true;
    thread.interrupt();
    side.stopStarting();
    try {
      thread.join(TimeUnit.SECONDS.toMillis(10));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
