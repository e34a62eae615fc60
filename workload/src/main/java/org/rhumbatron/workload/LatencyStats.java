package org.rhumbatron.workload;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.HdrHistogram.Histogram;

/**
 * Latency samples in an HdrHistogram, written into a benchmark's JSON as milliseconds. Percentiles
 * are nearest-rank; a figure is the top of its sample's bucket.
 */
public final class LatencyStats {
  /** Values below 2048 are kept exactly, larger ones within 1/1024 of themselves. */
  public static final int SIGNIFICANT_DIGITS = 3;

  private LatencyStats() {}

  /** The samples in a histogram; a negative one (a clock stepped back) counts as 0. */
  public static Histogram histogram(long[] samples) {
    Histogram h = new Histogram(SIGNIFICANT_DIGITS);
    for (long v : samples) {
      h.recordValue(Math.max(0, v));
    }
    return h;
  }

  /** Puts {@code samples}, {@code p<N>} for each of {@code percentiles}, and {@code max}. */
  public static void put(ObjectNode into, long[] nanos, int... percentiles) {
    Histogram h = histogram(nanos);
    into.put("samples", h.getTotalCount());
    for (int p : percentiles) {
      into.put("p" + p, millis(h.getValueAtPercentile(p)));
    }
    into.put("max", millis(h.getMaxValue()));
  }

  /** The nearest-rank percentile of the samples, in any order; 0 when there are none. */
  public static long percentile(long[] samples, int p) {
    return histogram(samples).getValueAtPercentile(p);
  }

  public static double millis(long nanos) {
    return Math.round(nanos / 1e4) / 100.0;
  }
}
