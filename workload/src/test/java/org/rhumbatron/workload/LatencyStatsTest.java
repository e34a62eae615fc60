package org.rhumbatron.workload;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

/** Nanosecond samples to millisecond figures; the expected values are worked out by hand. */
class LatencyStatsTest {
  @Test
  void figuresAreNearestRankBucketTopsInMillis() {
    ObjectNode out = new ObjectMapper().createObjectNode();
    // Sorted: 250_000, 1_500_000, 3_000_000, 12_345_678. The p50 sample sits in a 1024 ns wide
    // bucket whose top is 1_500_159 ns; the p99 and max one in an 8192 ns bucket topped at
    // 12_353_535 ns.
    LatencyStats.put(out, new long[] {3_000_000, 250_000, 12_345_678, 1_500_000}, 50, 99);

    assertThat(out.path("samples").asLong()).isEqualTo(4);
    assertThat(out.path("p50").asDouble()).isEqualTo(1.5);
    assertThat(out.path("p99").asDouble()).isEqualTo(12.35);
    assertThat(out.path("max").asDouble()).isEqualTo(12.35);
  }

  @Test
  void aFigureIsWithinOnePartIn1024OfItsSample() {
    ObjectNode out = new ObjectMapper().createObjectNode();
    // 99_999_999 ns falls in a 65536 ns wide bucket that ends at 100_007_935 ns: 100.01 ms.
    LatencyStats.put(out, new long[] {99_999_999}, 50);

    assertThat(out.path("p50").asDouble()).isEqualTo(100.01);
    assertThat(out.path("max").asDouble()).isEqualTo(100.01);
  }

  @Test
  void noSamplesGiveZeroesAndABackwardClockCountsAsZero() {
    ObjectNode none = new ObjectMapper().createObjectNode();
    LatencyStats.put(none, new long[0], 50);
    assertThat(none.path("samples").asLong()).isZero();
    assertThat(none.path("p50").asDouble()).isZero();
    assertThat(none.path("max").asDouble()).isZero();

    assertThat(LatencyStats.percentile(new long[] {-7, 4, 9}, 1)).isZero();
    assertThat(LatencyStats.percentile(new long[] {-7, 4, 9}, 50)).isEqualTo(4);
  }
}
