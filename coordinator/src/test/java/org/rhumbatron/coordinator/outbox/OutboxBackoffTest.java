package org.rhumbatron.coordinator.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class OutboxBackoffTest {
  @Test
  void doublesFromOneSecondAndCapsAtFiveMinutes() {
    OutboxBackoff b = new OutboxBackoff(Duration.ofSeconds(1), Duration.ofMinutes(5), 10);
    assertThat(IntStream.rangeClosed(1, 12).mapToObj(b::delayAfter).map(Duration::toSeconds))
        .containsExactly(1L, 2L, 4L, 8L, 16L, 32L, 64L, 128L, 256L, 300L, 300L, 300L);
    assertThat(b.delayAfter(200)).isEqualTo(Duration.ofMinutes(5));
    assertThat(b.isLast(9)).isFalse();
    assertThat(b.isLast(10)).isTrue();
  }
}
