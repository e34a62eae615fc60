package org.rhumbatron.lifecycle.candidates;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;
import org.rhumbatron.lifecycle.StoredStates;

/** The state of a Candidate, as {@code candidates.state} stores it (lower case). */
public enum CandidateState {
  /** Composed; verification has not given its verdict. */
  OPEN,
  VERIFIED,
  REJECTED,
  PROMOTED,
  /** Composed on a base the project has left. */
  STALE;

  /** The states of a Candidate that can still be promoted. */
  public static final Set<CandidateState> LIVE =
      Collections.unmodifiableSet(EnumSet.of(OPEN, VERIFIED));

  public String dbName() {
    return StoredStates.dbName(this);
  }

  public static CandidateState fromDb(String value) {
    return StoredStates.parse(CandidateState.class, value, "candidates");
  }
}
