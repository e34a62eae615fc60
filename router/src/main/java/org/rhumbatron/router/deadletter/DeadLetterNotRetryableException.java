package org.rhumbatron.router.deadletter;

/**
 * Retry is not possible: an event-batch dead letter can only be dismissed (the seed's
 * poison-batch), and a dead letter whose original is not a valid Command has nothing to send.
 */
public final class DeadLetterNotRetryableException extends DeadLetterException {
  public DeadLetterNotRetryableException(long deadLetterId, String commandId, String why) {
    super(deadLetterId, "of " + commandId + " cannot be retried: " + why);
  }
}
