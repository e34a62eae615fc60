package org.rhumbatron.workload;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Arrays;

/** Latency samples in nanoseconds, written into a benchmark's JSON as milliseconds. */
public final class LatencyStats {
  private LatencyStats() {}

  /** Puts {@code samples}, {@code p<N>} for each of {@code percentiles}, and {@code max}. */
  public static void put(ObjectNode into, long[] nanos, int... percentiles) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    into.put("samples", sorted.length);
    for (int p : percentiles) {
      into.put("p" + p, millis(percentile(sorted, p)));
    }
    into.put("max", millis(sorted.length == 0 ? 0 : sorted[sorted.length - 1]));
  }

  /** The nearest-rank percentile of sorted samples; 0 when there are none. */
  public static long percentile(long[] sorted, int p) {
    if (sorted.length == 0) {
      return 0;
    }
    int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }

  public static double millis(long nanos) {
    return Math.round(nanos / 1e4) / 100.0;
  }
}
