package org.rhumbatron.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The CPU of a bench's own nats-server counts although it runs as a grandchild, under the {@code
 * sh} supervisor that the private server starts in.
 */
class CpuTimeTest {
  @Test
  void aGrandchildsCpuCounts() throws Exception {
    // sh (the child) starts a second sh that spins for a while, then waits; the child only waits.
    Process child =
        new ProcessBuilder(
                List.of(
                    "sh",
                    "-c",
                    "sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; sleep 30' & wait"))
            .start();
    try {
      long before = CpuTime.childrenNanosNow();
      Thread.sleep(1_500);
      assertThat(CpuTime.countsChildren()).isTrue();
      assertThat(CpuTime.childrenNanosNow() - before)
          .as("CPU of the spinning grandchild, in ns")
          .isGreaterThan(TimeUnit.MILLISECONDS.toNanos(100));
    } finally {
      child.descendants().forEach(ProcessHandle::destroyForcibly);
      child.destroyForcibly();
      child.waitFor(10, TimeUnit.SECONDS);
    }
  }
}
