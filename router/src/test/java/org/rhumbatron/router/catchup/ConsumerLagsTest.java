package org.rhumbatron.router.catchup;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.eventlog.EventLogClient.Backlog;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.testkit.SettableClock;
import org.slf4j.LoggerFactory;

/** The lag samples of the consumers: the age of the oldest unread Event, and the behind WARN. */
class ConsumerLagsTest {
  private static final Instant NOW = Instant.parse("2026-12-06T12:00:00Z");

  private final SettableClock clock = new SettableClock(NOW);
  private final ConsumerLags lags = new ConsumerLags(clock, Settings.defaults());
  private final Logger logger = (Logger) LoggerFactory.getLogger(ConsumerLags.class);
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();

  @BeforeEach
  void capture() {
    logs.start();
    logger.addAppender(logs);
  }

  @AfterEach
  void release() {
    logger.detachAppender(logs);
  }

  @Test
  void anUnreadEventPastBehindWarnIsWarnedAtMostOnceAMinutePerStream() {
    Map<Subscription, Backlog> old = archiverBehind(NOW.minus(Duration.ofMinutes(61)));
    lags.record(3, old);
    assertThat(warnings()).hasSize(1);
    assertThat(warnings().get(0))
        .contains("audit-archiver", "EVENTS_03", "3660 s old", "router.behind-warn");

    clock.advance(Duration.ofSeconds(30));
    lags.record(3, old);
    clock.advance(Duration.ofSeconds(29));
    lags.record(3, old);
    assertThat(warnings()).as("within the minute").hasSize(1);

    lags.record(4, old);
    assertThat(warnings()).as("another stream warns on its own").hasSize(2);

    clock.advance(Duration.ofSeconds(1));
    lags.record(3, old);
    assertThat(warnings()).as("a minute after the first").hasSize(3);
  }

  @Test
  void anUnreadEventYoungerThanBehindWarnIsNotWarned() {
    lags.record(3, archiverBehind(NOW.minus(Duration.ofMinutes(59))));
    clock.advance(Duration.ofSeconds(59));
    lags.record(3, archiverBehind(NOW.minus(Duration.ofMinutes(59))));
    assertThat(warnings()).isEmpty();
    clock.advance(Duration.ofSeconds(2));
    lags.record(3, archiverBehind(NOW.minus(Duration.ofMinutes(59))));
    assertThat(warnings()).as("now past the hour").hasSize(1);
  }

  @Test
  void theAgeIsOfTheOldestUnreadEventAsOfNowAndZeroWhenNoneIsUnread() {
    assertThat(lags.oldestUnreadAgeSeconds(2, Subscription.AUDIT_ARCHIVER)).isNaN();
    lags.record(2, archiverBehind(NOW.minusSeconds(90)));
    assertThat(lags.oldestUnreadAgeSeconds(2, Subscription.AUDIT_ARCHIVER)).isEqualTo(90.0);
    assertThat(lags.oldestUnreadAgeSeconds(2, Subscription.ANALYTICS_PROJECTOR)).isZero();
    clock.advance(Duration.ofSeconds(5));
    assertThat(lags.oldestUnreadAgeSeconds(2, Subscription.AUDIT_ARCHIVER)).isEqualTo(95.0);
  }

  @Test
  void aStreamIsBehindWithAFullBatchUnreadOrAnUnreadEventCatchUpAfterOld() {
    Map<Subscription, Backlog> few = archiverBehind(NOW.minusSeconds(29));
    assertThat(lags.record(1, few)).isFalse();
    assertThat(lags.record(1, archiverBehind(NOW.minusSeconds(30)))).isTrue();
    Map<Subscription, Backlog> full = none();
    full.put(Subscription.ANALYTICS_PROJECTOR, new Backlog(100, NOW));
    assertThat(lags.record(1, full)).isTrue();
    Map<Subscription, Backlog> nudged = none();
    nudged.put(Subscription.CAUSAL_ROUTER, new Backlog(500, NOW.minusSeconds(600)));
    assertThat(lags.record(1, nudged)).as("the nudged consumers are not caught up here").isFalse();
  }

  private static Map<Subscription, Backlog> archiverBehind(Instant oldest) {
    Map<Subscription, Backlog> b = none();
    b.put(Subscription.AUDIT_ARCHIVER, new Backlog(7, oldest));
    return b;
  }

  private static Map<Subscription, Backlog> none() {
    Map<Subscription, Backlog> b = new EnumMap<>(Subscription.class);
    for (Subscription s : Subscription.values()) {
      b.put(s, Backlog.NONE);
    }
    return b;
  }

  private List<String> warnings() {
    return logs.list.stream()
        .filter(e -> e.getLevel() == Level.WARN)
        .map(ILoggingEvent::getFormattedMessage)
        .toList();
  }
}
