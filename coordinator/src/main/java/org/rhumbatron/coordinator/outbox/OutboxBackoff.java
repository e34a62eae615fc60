package org.rhumbatron.coordinator.outbox;

import java.time.Duration;

/** The retry_wait schedule: 1 s, 2 s, 4 s ... doubling, capped at 5 min (the seed's defaults). */
public record OutboxBackoff(Duration initial, Duration max, int maxAttempts) {

  /** The wait after the {@code failedAttempts}-th failed attempt (1-based). */
  public Duration delayAfter(int failedAttempts) {
    if (failedAttempts < 1) {
      throw new IllegalArgumentException("failedAttempts must be >= 1, got " + failedAttempts);
    }
    int shift = Math.min(failedAttempts - 1, 30);
    long millis = initial.toMillis() << shift;
    if (millis <= 0 || millis > max.toMillis()) {
      return max;
    }
    return Duration.ofMillis(millis);
  }

  /** The attempt at which a row goes to failed instead of retry_wait. */
  public boolean isLast(int failedAttempts) {
    return failedAttempts >= maxAttempts;
  }
}
