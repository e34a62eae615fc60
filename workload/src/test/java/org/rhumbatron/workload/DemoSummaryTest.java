package org.rhumbatron.workload;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.rhumbatron.lifecycle.changes.ChangeState;

/** The summary's wake and latency lines, from known figures. */
class DemoSummaryTest {
  @Test
  void theWakeLineCountsEveryWakeAsReachedOrStale() {
    DemoSummary s = summary(new long[] {1, 2, 3});

    assertThat(s.toText())
        .contains("  wakes 10: 7 reached an Agent, 3 stale (1 repeat, 2 task_completed)\n")
        .doesNotContain("false wakeups");
    assertThat(s.toJson()).contains("\"total\" : 10").contains("\"stale\" : 3");
  }

  @Test
  void theLatencyLineHoldsNearestRankPercentilesOfTheSamples() throws Exception {
    JsonNode four = latency(new long[] {3, 5, 7, 12});
    assertThat(four.path("samples").asLong()).isEqualTo(4);
    assertThat(four.path("p50").asLong()).isEqualTo(5);
    assertThat(four.path("p99").asLong()).isEqualTo(12);
    assertThat(four.path("max").asLong()).isEqualTo(12);

    JsonNode hundred = latency(LongStream.rangeClosed(1, 100).toArray());
    assertThat(hundred.path("p50").asLong()).isEqualTo(50);
    assertThat(hundred.path("p99").asLong()).isEqualTo(99);
    assertThat(hundred.path("max").asLong()).isEqualTo(100);

    // Past 2047 the histogram's buckets widen (2 wide from 2048, 64 wide from 65536): a figure
    // is the top of its sample's bucket, within 1/1024 of the sample.
    JsonNode wide = latency(new long[] {2_049, 2_050, 100_003});
    assertThat(wide.path("p50").asLong()).isEqualTo(2_051);
    assertThat(wide.path("p99").asLong()).isEqualTo(100_031);
    assertThat(wide.path("max").asLong()).isEqualTo(100_031);

    JsonNode none = latency(new long[0]);
    assertThat(none.path("samples").asLong()).isZero();
    assertThat(none.path("p50").asLong()).isZero();
    assertThat(none.path("max").asLong()).isZero();
  }

  @Test
  void theFailoverLinesSayWhenTheDutiesMovedAndTheInFlightWorkWasHandled() throws Exception {
    FailoverWatch.Result handled =
        new FailoverWatch.Result("demo-core-3-x", 5, 3_214, 11_502, 11_502, List.of(), false);
    assertThat(summary(new long[] {1}, new DemoSummary.Cluster(3, handled)).toText())
        .contains("  cores               3; demo-core-3-x SIGKILLed half way, holding 5 duties\n")
        .contains("  duties moved        3.2 s after the kill: every duty held by a live node\n")
        .contains(
            "  in-flight handled   11.5 s after the kill: each Change open at the kill moved or"
                + " ended, each queue consumer acked what it had delivered by the kill\n")
        .contains("  every Change ended  yes\n")
        .doesNotContain("still waiting");

    FailoverWatch.Result stuck =
        new FailoverWatch.Result(
            "demo-core-3-x",
            5,
            3_214,
            -1,
            345_000,
            List.of("causal-router on EVENTS_00: ack floor 1294 below 1394 delivered at the kill"),
            false);
    DemoSummary s = summary(new long[] {1}, new DemoSummary.Cluster(3, stuck));
    assertThat(s.toText())
        .contains(
            "  in-flight handled   NOT within 345.0 s of the kill (the failover allowance): each"
                + " Change")
        .contains(
            "  still waiting       causal-router on EVENTS_00: ack floor 1294 below 1394"
                + " delivered at the kill\n");
    JsonNode cores = new ObjectMapper().readTree(s.toJson()).path("cores");
    assertThat(cores.path("duties_moved_ms").asLong()).isEqualTo(3_214);
    assertThat(cores.path("in_flight_handled_ms").isNull()).isTrue();
    assertThat(cores.path("failover_waiting")).hasSize(1);
  }

  private static JsonNode latency(long[] sortedMillis) throws Exception {
    return new ObjectMapper()
        .readTree(summary(sortedMillis).toJson())
        .path("publish_to_applied_ms");
  }

  private static DemoSummary summary(long[] sortedMillis) {
    return summary(sortedMillis, null);
  }

  private static DemoSummary summary(long[] sortedMillis, DemoSummary.Cluster cluster) {
    return new DemoSummary(
        new DemoSummary.Run(
            4,
            4,
            DemoSummary.OPERATOR,
            new DemoSummary.Approvals(),
            1_000,
            true,
            "http://127.0.0.1:1/",
            Path.of("/tmp/x"),
            cluster),
        Map.of(ChangeState.COMPLETED, 4L),
        100,
        50,
        0,
        7,
        new TreeMap<>(Map.of("task_completed", 2L, DemoSummary.REPEAT, 1L)),
        sortedMillis);
  }
}
