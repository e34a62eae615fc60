package org.rhumbatron.lifecycle.workflow;

/** The state of a Workflow instance, as {@code workflow_instances.state} stores it. */
public enum WorkflowState {
  /** Started and not ended: a run (now, or after a restart) does its next step. */
  RUNNING("running"),
  /** Every step is done. */
  COMPLETED("completed"),
  /** A step threw on every try; {@code last_error} says which and why. */
  FAILED("failed");

  private final String dbName;

  WorkflowState(String dbName) {
    this.dbName = dbName;
  }

  public String dbName() {
    return dbName;
  }

  static WorkflowState fromDb(String name) {
    for (WorkflowState s : values()) {
      if (s.dbName.equals(name)) {
        return s;
      }
    }
    throw new IllegalStateException(
        "unknown WorkflowState '" + name + "' in table workflow_instances");
  }
}
