package org.rhumbatron.lifecycle.claims;

import org.rhumbatron.lifecycle.StoredStates;

/** The state of a claim on a resource key, as {@code claims.state} stores it (lower case). */
public enum ClaimState {
  HELD,
  /** Its Agent released it. */
  RELEASED,
  /** Its {@code expires_at_ms} passed while it was held. */
  EXPIRED;

  public String dbName() {
    return StoredStates.dbName(this);
  }
}
