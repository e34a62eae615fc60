package org.rhumbatron.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.rhumbatron.testkit.SettableClock;

/** A bucket per key: a second's worth at once, then the rate, and how long to wait when over. */
class RateLimitsTest {
  final SettableClock clock = new SettableClock(Instant.parse("2026-06-01T08:00:00Z"));
  final RateLimits limits = new RateLimits(clock);

  @Test
  void aBurstOfOneSecondsWorthPassesThenTheRate() {
    for (int i = 0; i < 4; i++) {
      assertThat(limits.take("a", 4)).as("request " + i).isZero();
    }
    assertThat(limits.take("a", 4)).as("the fifth waits a second").isEqualTo(1);
    assertThat(limits.take("b", 4)).as("another key has its own bucket").isZero();
    clock.advance(Duration.ofMillis(250));
    assertThat(limits.take("a", 4)).as("a quarter second refills one").isZero();
    assertThat(limits.take("a", 4)).isEqualTo(1);
  }

  @Test
  void aLowRateAsksForSeveralSeconds() {
    // One request per second: a quarter of a token after 250 ms, 1 s to go.
    assertThat(limits.take("slow", 1)).isZero();
    assertThat(limits.take("slow", 1)).isEqualTo(1);
    clock.advance(Duration.ofSeconds(1));
    assertThat(limits.take("slow", 1)).isZero();
  }

  @Test
  void fullBucketsAreDroppedPastTheKeyBound() {
    for (int i = 0; i <= RateLimits.MAX_KEYS; i++) {
      limits.take("k" + i, 100);
    }
    clock.advance(Duration.ofSeconds(1));
    assertThat(limits.take("late", 100)).isZero();
    assertThat(limits.keys()).isEqualTo(1);
  }
}
