package org.rhumbatron.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.rhumbatron.testkit.SettableClock;

/** The charts' ring buffer on a clock the test moves: 15 minutes kept, older samples dropped. */
class ChartWindowTest {
  private static final Instant T0 = Instant.parse("2026-12-07T08:00:00Z");
  private final SettableClock clock = new SettableClock(T0);
  private final ChartWindow window =
      new ChartWindow(clock, ChartWindow.SPAN, Duration.ofSeconds(2));

  @Test
  void theWindowKeepsFifteenMinutesAndDropsOlderSamples() {
    // One sample every 2 s for 20 minutes: 601 taken, the last 15 minutes' 451 kept.
    for (int i = 0; i <= 600; i++) {
      window.add(Map.of("outbox.backlog", (double) i));
      if (i < 600) {
        clock.advance(Duration.ofSeconds(2));
      }
    }
    List<ChartWindow.Sample> kept = window.since(null);
    assertThat(kept).hasSize(451);
    assertThat(kept.get(0).at()).isEqualTo(T0.plus(Duration.ofMinutes(5)));
    assertThat(kept.get(0).values()).containsEntry("outbox.backlog", 150.0);
    assertThat(kept.get(kept.size() - 1).at()).isEqualTo(T0.plus(Duration.ofMinutes(20)));

    // Nothing added for 14 minutes: reading alone drops what left the window.
    clock.advance(Duration.ofMinutes(14));
    assertThat(window.since(null))
        .extracting(ChartWindow.Sample::at)
        .allMatch(at -> !at.isBefore(clock.instant().minus(ChartWindow.SPAN)))
        .hasSize(31);
    clock.advance(Duration.ofMinutes(2));
    assertThat(window.since(null)).isEmpty();
  }

  @Test
  void sinceAnswersOnlyTheNewerSamplesInOrder() {
    window.add(Map.of("a", 1.0));
    clock.advance(Duration.ofSeconds(2));
    ChartWindow.Sample second = window.add(Map.of("a", 2.0));
    clock.advance(Duration.ofSeconds(2));
    window.add(Map.of("a", 3.0));

    assertThat(window.since(second.at())).extracting(s -> s.values().get("a")).containsExactly(3.0);
    assertThat(window.since(T0.minusSeconds(1))).hasSize(3);
  }
}
