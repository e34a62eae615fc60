package org.rhumbatron.lifecycle;

import org.rhumbatron.protocol.RhumbatronException;

/**
 * A lifecycle request that cannot be carried out; the message names the id and the rule. Nothing
 * was written. {@link #permanent()} tells a command handler whether a retry could help.
 */
public class LifecycleException extends RhumbatronException {
  private final boolean permanent;

  public LifecycleException(String message, boolean permanent) {
    super(message);
    this.permanent = permanent;
  }

  /** True when the same request will fail again (bad input, a missing or ended item). */
  public boolean permanent() {
    return permanent;
  }

  /** A read's row limit must be at least 1 (an argument error, not a lifecycle rule). */
  public static void requirePositiveLimit(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, got " + limit);
    }
  }

  /** The Project is not there. */
  public static LifecycleException unknownProject(String projectId) {
    return new UnknownItemException("project", projectId);
  }

  /** The Project is archived or deleted, so it takes no new Change (or app). */
  public static LifecycleException projectNotActive(String projectId, String status) {
    return new LifecycleException(
        "project " + projectId + " is " + status + ": only an active project takes this", true);
  }

  public static LifecycleException unknownChange(String changeId) {
    return new UnknownItemException("change", changeId);
  }

  public static LifecycleException changeEnded(String changeId, String state, String what) {
    return new LifecycleException(
        "change " + changeId + " is " + state + ": cannot " + what + " an ended Change", true);
  }

  /** A command's payload lacks a field its handler needs, or has one of the wrong kind. */
  public static LifecycleException payload(String commandType, String commandId, String problem) {
    return new LifecycleException(commandType + " " + commandId + ": payload " + problem, true);
  }
}
