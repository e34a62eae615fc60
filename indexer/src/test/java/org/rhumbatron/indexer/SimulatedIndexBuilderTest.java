package org.rhumbatron.indexer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.rhumbatron.platform.config.Settings;

/** The simulated builder's seeded draw: reproducible, per attempt, at the configured rate. */
class SimulatedIndexBuilderTest {

  private static SimulatedIndexBuilder builder(String failureRate, String seed) {
    return new SimulatedIndexBuilder(
        Settings.defaults()
            .with(
                Map.of(
                    "indexer.simulated.failure-rate", failureRate,
                    "indexer.simulated.duration", "0ms",
                    "agents.simulated.seed", seed)));
  }

  @Test
  void theDefaultsNeverFailAndTheRateOneAlwaysFails() throws Exception {
    assertThat(Settings.defaults().get(Settings.SIMULATED_INDEX_FAILURE_RATE)).isZero();
    assertThat(Settings.defaults().get(Settings.SIMULATED_INDEX_DURATION)).hasMillis(20);
    builder("0.0", "1").build("p1", 3, 1);
    assertThatThrownBy(() -> builder("1.0", "1").build("p1", 3, 2))
        .isInstanceOf(IndexBuildException.class)
        .hasMessage("index of project p1 generation 3, attempt 2: simulated build failure");
  }

  @Test
  void theDrawDependsOnTheSeedProjectGenerationAndAttemptOnly() {
    SimulatedIndexBuilder half = builder("0.5", "1");
    boolean[] first = new boolean[200];
    IntStream.range(0, 200).forEach(i -> first[i] = half.fails("p" + i, 1, 1));
    // The same inputs draw the same, in a fresh builder too.
    SimulatedIndexBuilder again = builder("0.5", "1");
    IntStream.range(0, 200)
        .forEach(i -> assertThat(again.fails("p" + i, 1, 1)).isEqualTo(first[i]));
    long failed = IntStream.range(0, 200).filter(i -> first[i]).count();
    assertThat(failed).isBetween(60L, 140L);
    // A failed attempt's retry draws again: some of them succeed.
    assertThat(IntStream.range(0, 200).filter(i -> first[i] && !half.fails("p" + i, 1, 2)))
        .isNotEmpty();
    // Another seed draws differently.
    SimulatedIndexBuilder other = builder("0.5", "2");
    assertThat(IntStream.range(0, 200).filter(i -> other.fails("p" + i, 1, 1) != first[i]))
        .isNotEmpty();
  }
}
