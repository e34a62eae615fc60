package org.rhumbatron.integration;

import java.time.Duration;
import java.util.SplittableRandom;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.protocol.Fnv1a;

/**
 * A verifier for the demo, the tests and the benchmarks: after {@code verifier.simulated.duration}
 * it passes a share {@code verifier.simulated.pass-rate} of Candidates, drawn from {@code
 * agents.simulated.seed} and the Candidate id only, so a run is reproducible and a retried step
 * gives the same verdict.
 */
public final class SimulatedVerifier implements Verifier {
  private final double passRate;
  private final Duration duration;
  private final int seed;

  public SimulatedVerifier(Settings settings) {
    this.passRate = settings.get(Settings.SIMULATED_VERIFIER_PASS_RATE);
    this.duration = settings.get(Settings.SIMULATED_VERIFIER_DURATION);
    this.seed = settings.get(Settings.SIMULATED_SEED);
  }

  @Override
  public Verdict verify(String projectId, String changeId, String candidateId)
      throws InterruptedException {
    if (!duration.isZero()) {
      Thread.sleep(duration.toMillis()); // the simulated work itself, not a wait for a condition
    }
    long mix = ((long) seed << 32) ^ Fnv1a.fnv1a32("verify#" + candidateId);
    boolean passed = passRate >= 1 || new SplittableRandom(mix).nextDouble() < passRate;
    return new Verdict(passed, passed ? null : "simulated verification failure");
  }
}
