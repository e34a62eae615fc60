package org.rhumbatron.router.deadletter;

/** No dead letter has this id. */
public final class DeadLetterNotFoundException extends DeadLetterException {
  public DeadLetterNotFoundException(long deadLetterId) {
    super(deadLetterId, "no such dead letter");
  }
}
