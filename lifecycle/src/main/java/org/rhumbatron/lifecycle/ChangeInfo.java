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

  public boolean ended() {
    return !OPEN_STATES.contains(state);
  }
}
