package org.rhumbatron.lifecycle.changes;

import java.util.List;
import org.rhumbatron.lifecycle.tasks.TaskRef;

/**
 * What change.settle decided, and the dispatch it ran (its wakes are the caller's to send).
 *
 * @param stopped the Tasks whose Agents the Change's failure stopped (empty unless {@code FAILED})
 */
public record Settled(
    Decision decision, Dispatched dispatched, String reason, List<TaskRef> stopped) {

  public Settled(Decision decision, Dispatched dispatched, String reason) {
    this(decision, dispatched, reason, List.of());
  }

  public enum Decision {
    /** The Change is not open: nothing to settle. */
    NOTHING,
    /** Every Task completed: the Change moved to verifying. */
    VERIFICATION,
    /** A Task failed (or was blocked) on its last attempt: the Change failed. */
    FAILED,
    /** Failed Tasks are ready for their next attempt and ready Tasks got Agents. */
    DISPATCHED,
    /**
     * The verifying Change has had no live Candidate for {@code changes.candidate-missing-after}:
     * the caller sends candidate.create again ({@link
     * org.rhumbatron.lifecycle.LifecycleCommands#candidateAgain}).
     */
    CANDIDATE_AGAIN
  }
}
