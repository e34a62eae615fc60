package org.rhumbatron.app;

import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.rhumbatron.platform.concurrent.DaemonThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Core started while NATS did not answer: on a thread of its own (never the client's event thread,
 * which the start's requests would block) it waits for the connection, says so at most every {@link
 * #LOG_EVERY}, and then starts {@link NatsSide}, again after a failed try, until it is up.
 */
final class NatsStartWait implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(NatsStartWait.class);
  static final Duration LOG_EVERY = Duration.ofSeconds(30);
  // Also the pause between start tries while connected: each try's requests time out on their own.
  private static final Duration CHECK_EVERY = Duration.ofSeconds(1);

  private final Connection nats;
  private final String shownUrl;
  private final NatsSide side;
  private final Clock clock;
  private final Semaphore wake = new Semaphore(0);
  private final Thread thread;
  private volatile boolean stopped;

  private NatsStartWait(Connection nats, String shownUrl, NatsSide side, Clock clock) {
    this.nats = nats;
    this.shownUrl = shownUrl;
    this.side = side;
    this.clock = clock;
    this.thread = DaemonThreads.named("nats-start-wait").newThread(this::run);
  }

  static NatsStartWait start(Connection nats, String shownUrl, NatsSide side, Clock clock) {
    NatsStartWait wait = new NatsStartWait(nats, shownUrl, side, clock);
    nats.addConnectionListener(
        (connection, event) -> {
          if (event == ConnectionListener.Events.CONNECTED
              || event == ConnectionListener.Events.RECONNECTED) {
            wait.wake.release();
          }
        });
    wait.thread.start();
    return wait;
  }

  private void run() {
    Instant nextLog = Instant.MIN;
    while (!stopped) {
      boolean connected = nats.getStatus() == Connection.Status.CONNECTED;
      if (connected) {
        try {
          int resumed = side.start();
          log.info(
              "NATS at {} is connected: core created its streams and started its queues and"
                  + " router; {} streams resume publishing",
              shownUrl,
              resumed);
          return;
        } catch (Exception e) {
          if (stopped) {
            return;
          }
          if (!clock.instant().isBefore(nextLog)) {
            log.warn("NATS at {} answers, but core could not start on it yet: {}", shownUrl, e);
            nextLog = clock.instant().plus(LOG_EVERY);
          }
        }
      } else if (!clock.instant().isBefore(nextLog)) {
        log.warn(
            "core waits for NATS at {}: not connected yet; state changes commit and their events"
                + " wait in the outbox",
            shownUrl);
        nextLog = clock.instant().plus(LOG_EVERY);
      }
      try {
        wake.tryAcquire(CHECK_EVERY.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        return;
      }
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
