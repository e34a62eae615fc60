package org.rhumbatron.lifecycle;

/** The state of a claim on a resource key, as {@code claims.state} stores it (lower case). */
enum ClaimState {
  HELD,
  /** Its Agent released it. */
  RELEASED,
  /** Its {@code expires_at_ms} passed while it was held. */
  EXPIRED;

  String dbName() {
    return StoredStates.dbName(this);
  }
}
