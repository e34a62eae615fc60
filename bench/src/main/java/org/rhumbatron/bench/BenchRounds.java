package org.rhumbatron.bench;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * Rates of a benchmark's alternating rounds. On a small machine one round's figure swings with
 * whatever else runs; the median of several rounds, each paired with its raw figure, does not.
 */
final class BenchRounds {
  private BenchRounds() {}

  /** The median of {@code rates} (the mean of the middle two for an even count). */
  static double median(List<Double> rates) {
    if (rates.isEmpty()) {
      throw new IllegalArgumentException("no rounds");
    }
    double[] sorted = rates.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int mid = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }

  /** The median of {@code values} to {@code digits} decimals. */
  static double median(List<Double> values, int digits) {
    double scale = Math.pow(10, digits);
    return Math.round(median(values) * scale) / scale;
  }

  /** One figure of each round, in order. */
  static <R> List<Double> each(List<R> rounds, ToDoubleFunction<R> figure) {
    return rounds.stream().map(figure::applyAsDouble).toList();
  }

  /** {@code measured / raw} to three places. */
  static double ratio(double measured, double raw) {
    return Math.round(measured / raw * 1000) / 1000.0;
  }

  /** Puts each round's rate as {@code rounds.<name>}: one array per figure. */
  static void put(ObjectNode into, String name, List<Double> rates) {
    ArrayNode array = into.with("rounds").putArray(name);
    rates.forEach(v -> array.add(Math.round(v)));
  }
}
