package org.rhumbatron.lifecycle.changes;

import java.util.List;
import org.rhumbatron.lifecycle.StoredStates;

/**
 * A Change as its row holds it.
 *
 * @param reason why it failed or is stuck (e.g. a dead letter), or null
 */
public record ChangeInfo(
    String changeId,
    String projectId,
    String tenantId,
    String clientRequestId,
    String title,
    ChangeState changeState,
    String reason) {

  /** {@link ChangeState#OPEN_STATES} by the names the API and the database use. */
  public static final List<String> OPEN_STATES = StoredStates.dbNames(ChangeState.OPEN_STATES);

  /** {@link ChangeState#VERIFIED_ONWARD} by the names the API and the database use. */
  public static final List<String> VERIFIED_ONWARD =
      StoredStates.dbNames(ChangeState.VERIFIED_ONWARD);

  /** The state by the name the API, the Events and the database use. */
  public String state() {
    return changeState.dbName();
  }

  /** Its work graph completed: it is verifying or has moved on from there (not failed). */
  public boolean reachedVerification() {
    return ChangeState.VERIFIED_ONWARD.contains(changeState);
  }

  public boolean ended() {
    return changeState.ended();
  }

  ChangeInfo withState(ChangeState state) {
    return new ChangeInfo(changeId, projectId, tenantId, clientRequestId, title, state, reason);
  }
}
