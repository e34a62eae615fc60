package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.nats.client.Connection;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.nats.NatsServerExtension;
import org.slf4j.LoggerFactory;

/** The wait for NATS says so once, then at most every 30 s of its clock, however often it tries. */
class NatsStartWaitTest {
  @RegisterExtension static final NatsServerExtension nats = new NatsServerExtension();

  @Test
  void warnsOnceThenAtMostEveryThirtySecondsWhileItTries() {
    SettableClock clock = new SettableClock(Instant.parse("2026-12-06T10:00:00Z"));
    AtomicInteger attempts = new AtomicInteger();
    NatsStartWait.Connector refused =
        () -> {
          attempts.incrementAndGet();
          throw new IOException("Unable to connect to NATS servers: [nats://127.0.0.1:1]");
        };
    // Never started: the connector never answers, so only its stop is reached.
    NatsSide side =
        new NatsSide(
            null,
            clock,
            "nats://127.0.0.1:1",
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null);
    try (Warnings logs = new Warnings();
        NatsStartWait wait =
            NatsStartWait.start(
                refused,
                "nats://127.0.0.1:1",
                side,
                clock,
                new IOException("first attempt"),
                null)) {
      await().atMost(Duration.ofSeconds(20)).until(() -> attempts.get() >= 3);
      assertThat(warnings(logs))
          .singleElement()
          .satisfies(l -> assertThat(l).startsWith("core waits for NATS at nats://127.0.0.1:1"));

      clock.advance(NatsStartWait.LOG_EVERY);
      await().atMost(Duration.ofSeconds(20)).until(() -> warnings(logs).size() == 2);
      int seen = attempts.get();
      await().atMost(Duration.ofSeconds(20)).until(() -> attempts.get() >= seen + 2);
      assertThat(warnings(logs)).hasSize(2);
      assertThat(warnings(logs).get(1))
          .startsWith("core still waits for NATS at nats://127.0.0.1:1: not connected yet")
          .contains("Unable to connect");
    }
  }

  /**
   * NATS answered but the start timed out half way (a stalled link): the wait goes on with that
   * connection, trying the start again, and makes no new connection.
   */
  @Test
  void aConnectionThatAnsweredIsKeptWhileTheStartIsTriedAgain() throws Exception {
    SettableClock clock = new SettableClock(Instant.parse("2026-12-06T10:00:00Z"));
    AtomicInteger attempts = new AtomicInteger();
    NatsStartWait.Connector counted =
        () -> {
          attempts.incrementAndGet();
          throw new IOException("a new connection was asked for");
        };
    // A side without its parts: each start fails, as one over a stalled link does.
    NatsSide side =
        new NatsSide(null, clock, nats.url(), null, null, null, null, null, null, null, null, null);
    try (Warnings logs = new Warnings();
        Connection answered = JetStreamConnections.connect(nats.url(), "answered");
        NatsStartWait wait =
            NatsStartWait.start(
                counted,
                nats.url(),
                side,
                clock,
                new IOException("Timeout or no response waiting for NATS JetStream server"),
                answered)) {
      await().atMost(Duration.ofSeconds(10)).until(() -> side.connection() == answered);
      clock.advance(NatsStartWait.LOG_EVERY);
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> warnings(logs).stream().anyMatch(w -> w.contains("no start yet")));
      assertThat(attempts).hasValue(0);
    }
  }

  private static List<String> warnings(Warnings logs) {
    return logs.appender.list.stream()
        .filter(e -> e.getLevel() == Level.WARN)
        .map(ILoggingEvent::getFormattedMessage)
        .toList();
  }

  /** What {@link NatsStartWait} logs while open. */
  private static final class Warnings implements AutoCloseable {
    final Logger logger = (Logger) LoggerFactory.getLogger(NatsStartWait.class);
    final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    Warnings() {
      appender.start();
      logger.addAppender(appender);
    }

    @Override
    public void close() {
      logger.detachAppender(appender);
    }
  }
}
