package org.rhumbatron.router.causal;

import java.util.Locale;

/**
 * Clef-flash's decision on one question: wake or skip the Agent, and why. Only an answer at or
 * above the threshold can skip; every other reason wakes.
 *
 * @param probability the model's probability for its decision, or null when it gave none
 * @param latencyMs how long the model call took; 0 when no call was made
 */
public record ModelRoute(Decision decision, Double probability, long latencyMs, Reason reason) {

  /** What happens to the Agent. */
  public enum Decision {
    WAKE,
    SKIP;

    /** {@code wake} or {@code skip}, as in the tool call and the data point. */
    public String wireName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** Why: the model decided, or one of the ways the policy wakes without its decision. */
  public enum Reason {
    /** The model answered at or above the threshold; its decision stands. */
    MODEL("model", true, true),
    /** The model answered below the threshold: wake. */
    ABSTAINED("abstained", true, true),
    /** The UTC day's calls are used up: wake without asking. */
    DAILY_CAP("daily_cap", false, false),
    TIMEOUT("timeout", true, false),
    ERROR("error", true, false),
    MALFORMED("malformed", true, false),
    /** No API key is configured: wake without asking. */
    NO_API_KEY("no_api_key", false, false);

    private final String wireName;
    private final boolean called;
    private final boolean answered;

    Reason(String wireName, boolean called, boolean answered) {
      this.wireName = wireName;
      this.called = called;
      this.answered = answered;
    }

    public String wireName() {
      return wireName;
    }

    /** Whether a decision for this reason made a model call. */
    public boolean called() {
      return called;
    }

    /** The reason named {@code wireName}, as a recorded decision carries it. */
    public static Reason fromWire(String wireName) {
      for (Reason r : values()) {
        if (r.wireName.equals(wireName)) {
          return r;
        }
      }
      throw new IllegalArgumentException("unknown Clef-flash reason: " + wireName);
    }
  }

  public ModelRoute {
    if (decision == null || reason == null) {
      throw new IllegalArgumentException("decision and reason are required");
    }
    if (decision == Decision.SKIP && reason != Reason.MODEL) {
      throw new IllegalArgumentException("only reason model can skip, not " + reason.wireName);
    }
    if ((probability != null) != reason.answered) {
      throw new IllegalArgumentException(
          "probability must be "
              + (reason.answered ? "set" : "null")
              + " for reason "
              + reason.wireName);
    }
    if (probability != null && !(probability >= 0 && probability <= 1)) {
      throw new IllegalArgumentException("probability must be in 0..1, not " + probability);
    }
    if (latencyMs < 0) {
      throw new IllegalArgumentException("latencyMs must be >= 0, not " + latencyMs);
    }
  }

  /** A wake for a reason that needs no answer (a cap, a failed call, no key). */
  static ModelRoute wake(Reason reason, long latencyMs) {
    return new ModelRoute(Decision.WAKE, null, latencyMs, reason);
  }

  /** Whether a model call was made for this decision. */
  public boolean called() {
    return reason.called();
  }
}
