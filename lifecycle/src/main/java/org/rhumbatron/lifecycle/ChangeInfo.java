package org.rhumbatron.lifecycle;

import java.util.List;

/**
 * A Change as its row holds it.
 *
 * @param state open, verifying, awaiting_approval, releasing, completed, failed, cancelled,
 *     not_selected or declined
 * @param reason why it failed or is stuck (e.g. a dead letter), or null
 */
public record ChangeInfo(
    String changeId,
    String projectId,
    String tenantId,
    String clientRequestId,
    String title,
    String state,
    String reason) {

  /** The states a Change can still move out of. */
  public static final List<String> OPEN_STATES =
      List.of("open", "verifying", "awaiting_approval", "releasing");

  /** The states a Change is in once its work graph completed and it went to verification. */
  public static final List<String> VERIFIED_ONWARD =
      List.of("verifying", "awaiting_approval", "releasing", "completed");

  /** Its work graph completed: it is verifying or has moved on from there (not failed). */
  public boolean reachedVerification() {
    return VERIFIED_ONWARD.contains(state);
  }

  public boolean ended() {
    return !OPEN_STATES.contains(state);
  }
}
