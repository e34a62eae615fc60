package org.rhumbatron.lifecycle.changes;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;
import org.rhumbatron.lifecycle.StoredStates;

/** The state of a Change, as {@code changes.state} stores it (lower case). */
public enum ChangeState {
  OPEN,
  VERIFYING,
  AWAITING_APPROVAL,
  /** Promoted with a live app: the release Workflow runs. */
  RELEASING,
  COMPLETED,
  FAILED,
  CANCELLED,
  /** A fork whose sibling variant was promoted. */
  NOT_SELECTED,
  /** The operator said no at approval. */
  DECLINED;

  /** The states a Change can still move out of. */
  public static final Set<ChangeState> OPEN_STATES =
      Collections.unmodifiableSet(EnumSet.of(OPEN, VERIFYING, AWAITING_APPROVAL, RELEASING));

  /** The states a Change is in once its work graph completed and it went to verification. */
  public static final Set<ChangeState> VERIFIED_ONWARD =
      Collections.unmodifiableSet(EnumSet.of(VERIFYING, AWAITING_APPROVAL, RELEASING, COMPLETED));

  public String dbName() {
    return StoredStates.dbName(this);
  }

  public boolean ended() {
    return !OPEN_STATES.contains(this);
  }

  /** The end reason of a Task cancelled with its Change in this state: {@code change_<state>}. */
  public String taskEndReason() {
    return "change_" + dbName();
  }

  public static ChangeState fromDb(String value) {
    return StoredStates.parse(ChangeState.class, value, "changes");
  }
}
