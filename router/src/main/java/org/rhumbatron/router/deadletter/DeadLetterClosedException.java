package org.rhumbatron.router.deadletter;

/** The dead letter is closed already (succeeded, superseded, dismissed or change_ended). */
public final class DeadLetterClosedException extends DeadLetterException {
  private final String resolution;

  public DeadLetterClosedException(long deadLetterId, String commandId, String resolution) {
    super(deadLetterId, "of " + commandId + " is closed already (resolution " + resolution + ")");
    this.resolution = resolution;
  }

  public String resolution() {
    return resolution;
  }
}
