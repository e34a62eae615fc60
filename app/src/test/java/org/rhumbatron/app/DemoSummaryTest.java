package org.rhumbatron.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The summary's wake line: every wake, those that reached an Agent and the stale ones. */
class DemoSummaryTest {
  @Test
  void theWakeLineCountsEveryWakeAsReachedOrStale() {
    DemoSummary s =
        new DemoSummary(
            new DemoSummary.Run(
                4,
                4,
                DemoSummary.OPERATOR,
                new DemoSummary.Approvals(),
                1_000,
                true,
                "http://127.0.0.1:1/",
                Path.of("/tmp/x"),
                null),
            Map.of("completed", 4L),
            100,
            50,
            0,
            7,
            new TreeMap<>(Map.of("task_completed", 2L, DemoSummary.REPEAT, 1L)),
            new long[] {1, 2, 3});

    assertThat(s.toText())
        .contains("  wakes 10: 7 reached an Agent, 3 stale (1 repeat, 2 task_completed)\n")
        .doesNotContain("false wakeups");
    assertThat(s.toJson()).contains("\"total\" : 10").contains("\"stale\" : 3");
  }
}
