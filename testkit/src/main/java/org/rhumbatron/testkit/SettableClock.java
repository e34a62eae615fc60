package org.rhumbatron.testkit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/** A {@link Clock} that tests move by hand, so time rules run without sleeping. */
public final class SettableClock extends Clock {
  private final AtomicReference<Instant> now;

  public SettableClock(Instant start) {
    this.now = new AtomicReference<>(start);
  }

  /** Starts at 2026-01-01T00:00:00Z, a fixed point so day boundaries are predictable. */
  public SettableClock() {
    this(Instant.parse("2026-01-01T00:00:00Z"));
  }

  public void set(Instant instant) {
    now.set(instant);
  }

  public Instant advance(Duration by) {
    return now.updateAndGet(i -> i.plus(by));
  }

  @Override
  public Instant instant() {
    return now.get();
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    throw new UnsupportedOperationException("SettableClock is always UTC");
  }
}
