package org.rhumbatron.integration;

/**
 * What the verification Workflow runs on a Candidate: its checks pass or fail. Core ships {@link
 * SimulatedVerifier}; a real one runs a build and its tests.
 */
public interface Verifier {

  /** The outcome; a thrown exception is a failed step, tried again by the Workflow. */
  Verdict verify(String projectId, String changeId, String candidateId) throws Exception;

  /**
   * @param reason why it failed, or null
   */
  record Verdict(boolean passed, String reason) {}
}
