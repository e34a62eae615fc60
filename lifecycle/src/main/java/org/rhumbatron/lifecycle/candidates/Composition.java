package org.rhumbatron.lifecycle.candidates;

import java.util.List;

/**
 * What candidate.create did for a Change.
 *
 * @param candidateId the Candidate (derived from its composition key), or null unless composed
 * @param created true when this call composed it; false when a redelivery found it
 * @param conflicts the other Changes whose open claims overlap this Change's changesets
 */
public record Composition(
    Outcome outcome,
    String candidateId,
    boolean created,
    long baseGeneration,
    List<String> changesetIds,
    List<String> conflicts) {

  public enum Outcome {
    /** The Candidate exists (composed now or by an earlier delivery). */
    COMPOSED,
    /** Changesets overlap open claims of other Changes: wait for a conflict review. */
    WAITING_FOR_REVIEW,
    /** The Change is not verifying (it moved on, or ended): nothing to compose. */
    NOT_VERIFYING
  }
}
