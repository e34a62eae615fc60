package org.rhumbatron.api;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rhumbatron.api.AuthFailures.Reason;
import org.rhumbatron.testkit.SettableClock;
import org.slf4j.LoggerFactory;

/** Every refusal is counted; a source's failed authentications are logged once a minute. */
class AuthFailuresTest {
  final SettableClock clock = new SettableClock(Instant.parse("2026-06-01T08:00:00Z"));
  final AuthFailures failures = new AuthFailures(clock);
  final Logger logger = (Logger) LoggerFactory.getLogger(AuthFailures.class);
  final ListAppender<ILoggingEvent> lines = new ListAppender<>();

  @BeforeEach
  void capture() {
    lines.start();
    logger.addAppender(lines);
  }

  @AfterEach
  void release() {
    logger.detachAppender(lines);
  }

  List<String> logged() {
    return lines.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
  }

  @Test
  void aSourceIsLoggedOnceAMinuteWithHowManyWereNot() {
    for (int i = 0; i < 50; i++) {
      failures.failed("10.0.0.7", Reason.INVALID, "the bearer token is unknown or revoked");
    }
    failures.failed("10.0.0.8", Reason.MISSING, "a read needs the header");
    clock.advance(Duration.ofSeconds(59));
    failures.failed("10.0.0.7", Reason.INVALID, "the bearer token is unknown or revoked");
    clock.advance(Duration.ofSeconds(1));
    failures.failed("10.0.0.7", Reason.INVALID, "the bearer token is unknown or revoked");
    assertThat(logged())
        .containsExactly(
            "failed authentication from 10.0.0.7: the bearer token is unknown or revoked",
            "failed authentication from 10.0.0.8: a read needs the header",
            "failed authentication from 10.0.0.7: the bearer token is unknown or revoked"
                + " (50 more in the minute before, not logged)");
    assertThat(failures.count(Reason.INVALID)).isEqualTo(52);
    assertThat(failures.count(Reason.MISSING)).isEqualTo(1);
  }

  @Test
  void aGoodCredentialRefusedForItsRoleOrRateIsCountedNotLogged() {
    failures.failed("10.0.0.9", Reason.FORBIDDEN, "");
    failures.failed("10.0.0.9", Reason.RATE_LIMITED, "");
    assertThat(logged()).isEmpty();
    assertThat(failures.count(Reason.FORBIDDEN)).isEqualTo(1);
    assertThat(failures.count(Reason.RATE_LIMITED)).isEqualTo(1);
  }
}
