package org.rhumbatron.api;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;

/**
 * The dashboard's charts: the samples of the last {@link #span} in memory, oldest first. A sample
 * older than the span (by the clock) drops out when the next one comes or the window is read.
 */
public final class ChartWindow {
  /** The last 15 minutes: what the charts show. */
  public static final Duration SPAN = Duration.ofMinutes(15);

  /**
   * One sample: at a time, a value per series (a rate per second or a level), null when core could
   * not read it.
   */
  public record Sample(Instant at, Map<String, Double> values) {
    public Sample {
      values = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(values));
    }
  }

  private final Clock clock;
  private final Duration span;
  private final Duration every;
  private final Deque<Sample> samples = new ArrayDeque<>();

  /**
   * @param every how often the sampler adds one, which the charts show as their resolution
   */
  public ChartWindow(Clock clock, Duration span, Duration every) {
    if (span.isNegative() || span.isZero() || every.isNegative() || every.isZero()) {
      throw new IllegalArgumentException("span and every must be positive");
    }
    this.clock = clock;
    this.span = span;
    this.every = every;
  }

  /** Adds a sample taken now, by the clock. */
  public synchronized Sample add(Map<String, Double> values) {
    Sample s = new Sample(clock.instant(), values);
    samples.addLast(s);
    dropOld();
    return s;
  }

  /** The samples of the window taken after {@code after} (null: all), oldest first. */
  public synchronized List<Sample> since(Instant after) {
    dropOld();
    List<Sample> out = new ArrayList<>();
    for (Sample s : samples) {
      if (after == null || s.at().isAfter(after)) {
        out.add(s);
      }
    }
    return out;
  }

  public Duration span() {
    return span;
  }

  public Duration every() {
    return every;
  }

  private void dropOld() {
    Instant oldest = clock.instant().minus(span);
    while (!samples.isEmpty() && samples.peekFirst().at().isBefore(oldest)) {
      samples.removeFirst();
    }
  }
}
