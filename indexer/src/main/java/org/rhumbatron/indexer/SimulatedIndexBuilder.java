package org.rhumbatron.indexer;

import java.time.Duration;
import java.util.SplittableRandom;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.protocol.Fnv1a;

/**
 * An index builder for the demo, the tests and the benchmarks: after {@code
 * indexer.simulated.duration} it fails a share {@code indexer.simulated.failure-rate} of build
 * attempts, drawn from {@code agents.simulated.seed}, the project, the generation and the attempt
 * only, so a run is reproducible and a retry (the next attempt) can succeed.
 */
public final class SimulatedIndexBuilder implements IndexBuilder {
  private final Duration duration;
  private final double failureRate;
  private final int seed;

  public SimulatedIndexBuilder(Settings settings) {
    this.duration = settings.get(Settings.SIMULATED_INDEX_DURATION);
    this.failureRate = settings.get(Settings.SIMULATED_INDEX_FAILURE_RATE);
    this.seed = settings.get(Settings.SIMULATED_SEED);
  }

  @Override
  public void build(String projectId, long generation, int attempt) throws InterruptedException {
    if (!duration.isZero()) {
      Thread.sleep(duration.toMillis()); // the simulated work itself, not a wait for a condition
    }
    if (fails(projectId, generation, attempt)) {
      throw new IndexBuildException(projectId, generation, attempt, "simulated build failure");
    }
  }

  /** The seeded draw: true when this attempt fails. */
  boolean fails(String projectId, long generation, int attempt) {
    if (failureRate <= 0) {
      return false;
    }
    long mix =
        ((long) seed << 32)
            ^ Fnv1a.fnv1a32("index#" + projectId + "#" + generation + "#" + attempt);
    return failureRate >= 1 || new SplittableRandom(mix).nextDouble() < failureRate;
  }
}
