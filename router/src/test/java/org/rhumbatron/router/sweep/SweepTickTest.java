package org.rhumbatron.router.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.rhumbatron.platform.config.Settings;

class SweepTickTest {
  private final Settings settings = Settings.defaults();

  @Test
  void anyEightTicksInARowVisitEveryStreamOnce() {
    Instant start = Instant.parse("2026-12-02T23:57:00Z"); // across midnight too
    for (int offset = 0; offset < 8; offset++) {
      TreeSet<Integer> streams = new TreeSet<>();
      for (int i = 0; i < 8; i++) {
        streams.add(SweepTick.at(start.plusSeconds(60L * (offset + i)), settings).streamIndex());
      }
      assertThat(streams).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
    }
  }

  @Test
  void theDailyTickIs0417UtcAndTheReleaseSweepRunsAtMinute4914() {
    Instant day = Instant.parse("2026-12-02T00:00:00Z");
    List<String> daily = new ArrayList<>();
    List<Integer> releaseMinutesOfHour = new ArrayList<>();
    for (int m = 0; m < 24 * 60; m++) {
      Instant at = day.plus(Duration.ofMinutes(m)).plusSeconds(12);
      SweepTick tick = SweepTick.at(at, settings);
      assertThat(tick.minute()).isEqualTo(day.plus(Duration.ofMinutes(m)));
      if (tick.daily()) {
        daily.add(tick.minute().toString());
      }
      if (tick.releaseSweep() && m < 60) {
        releaseMinutesOfHour.add(m);
      }
      assertThat(tick.runsAnalytics()).isEqualTo(!tick.daily() && !tick.releaseSweep());
    }
    assertThat(daily).containsExactly("2026-12-02T04:17:00Z");
    assertThat(releaseMinutesOfHour).containsExactly(4, 9, 14, 19, 24, 29, 34, 39, 44, 49, 54, 59);
  }
}
