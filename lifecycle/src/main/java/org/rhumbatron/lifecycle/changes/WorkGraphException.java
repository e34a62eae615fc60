package org.rhumbatron.lifecycle.changes;

import org.rhumbatron.lifecycle.LifecycleException;

/** A work graph that is not a valid DAG of Tasks; the message names the Task and the rule. */
public final class WorkGraphException extends LifecycleException {
  public WorkGraphException(String message) {
    super("work graph: " + message, true);
  }
}
