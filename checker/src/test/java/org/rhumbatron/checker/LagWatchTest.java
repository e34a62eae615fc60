package org.rhumbatron.checker;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The run's largest oldest-unread age per consumer, from core's Prometheus text. */
class LagWatchTest {
  @Test
  void keepsEachConsumersLargestAgeOverStreamsAndScrapes() {
    LagWatch watch = new LagWatch("http://127.0.0.1:1");
    watch.record(
        String.join(
            "\n",
            "# HELP " + LagWatch.METRIC + " Seconds since ...",
            LagWatch.METRIC + "{consumer=\"audit-archiver\",stream=\"EVENTS_00\"} 12.5",
            LagWatch.METRIC + "{consumer=\"audit-archiver\",stream=\"EVENTS_01\"} 40.2",
            LagWatch.METRIC + "{consumer=\"analytics-projector\",stream=\"EVENTS_00\"} NaN",
            "rhumbatron_consumer_lag{consumer=\"audit-archiver\",stream=\"EVENTS_00\"} 900.0",
            ""));
    watch.record(LagWatch.METRIC + "{consumer=\"audit-archiver\",stream=\"EVENTS_03\"} 7.0\n");
    CheckReport report = new CheckReport();
    watch.report(report);
    assertThat(report.totals())
        .containsEntry(LagWatch.TOTAL + "audit-archiver", 41L)
        .doesNotContainKey(LagWatch.TOTAL + "analytics-projector");
  }
}
