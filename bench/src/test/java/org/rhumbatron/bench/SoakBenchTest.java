package org.rhumbatron.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.rhumbatron.platform.config.Settings;

/** The soak's settings pass the conflict checks that a core starts with. */
class SoakBenchTest {
  @Test
  void everyHorizonIsShortenedToKeepAndThePurgesRunEveryMinute() {
    Duration keep = Duration.ofSeconds(90);
    Settings s = SoakBench.settings(keep);

    assertThat(s.get(Settings.PROCESSED_EVENTS_KEEP)).isEqualTo(keep);
    assertThat(s.get(Settings.PROJECT_EVENTS_KEEP)).isEqualTo(keep);
    assertThat(s.get(Settings.PLATFORM_METRICS_KEEP)).isEqualTo(keep);
    assertThat(s.get(Settings.EVENT_STREAM_MAX_AGE)).isEqualTo(keep);
    assertThat(s.get(Settings.DUPLICATE_WINDOW)).isLessThanOrEqualTo(keep);
    assertThat(s.get(Settings.OUTBOX_KEEP_PUBLISHED)).isLessThan(keep);
    assertThat(s.get(Settings.MAINTENANCE_EVERY_MINUTES)).isEqualTo(1);
    assertThat(s.get(Settings.OUTBOX_PURGE_EVERY)).isEqualTo(Duration.ofMinutes(1));
  }
}
