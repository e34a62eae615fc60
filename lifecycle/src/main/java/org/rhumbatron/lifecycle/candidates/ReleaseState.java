package org.rhumbatron.lifecycle.candidates;

import org.rhumbatron.lifecycle.StoredStates;

/** The state of a release, as {@code releases.state} stores it (lower case): its Workflow's. */
public enum ReleaseState {
  /** The promoted Change is releasing; the release Workflow has not reported. */
  PENDING,
  COMPLETED,
  /** The Workflow failed; the Change stays releasing for release.recover. */
  FAILED;

  public String dbName() {
    return StoredStates.dbName(this);
  }

  public static ReleaseState fromDb(String value) {
    return StoredStates.parse(ReleaseState.class, value, "releases");
  }
}
