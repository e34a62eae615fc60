package org.rhumbatron.router.causal;

/** The model's raw answer, before the policy applies its threshold. */
public record ModelAnswer(ModelRoute.Decision decision, double probability) {
  public ModelAnswer {
    if (decision == null) {
      throw new IllegalArgumentException("decision is required");
    }
    if (!(probability >= 0 && probability <= 1)) {
      throw new IllegalArgumentException("probability must be in 0..1, not " + probability);
    }
  }
}
