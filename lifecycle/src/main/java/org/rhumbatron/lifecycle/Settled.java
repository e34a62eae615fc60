package org.rhumbatron.lifecycle;

/** What change.settle decided, and the dispatch it ran (its wakes are the caller's to send). */
public record Settled(Decision decision, Dispatched dispatched, String reason) {

  public enum Decision {
    /** The Change is not open: nothing to settle. */
    NOTHING,
    /** Every Task completed: the Change moved to verifying. */
    VERIFICATION,
    /** A Task failed (or was blocked) on its last attempt: the Change failed. */
    FAILED,
    /** Failed Tasks are ready for their next attempt and ready Tasks got Agents. */
    DISPATCHED
  }
}
