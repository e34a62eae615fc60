package org.rhumbatron.router.deadletter;

import org.rhumbatron.protocol.RhumbatronException;

/** An operator action on a dead letter was refused; subclasses say why and name the row. */
public class DeadLetterException extends RhumbatronException {
  private final long deadLetterId;

  public DeadLetterException(long deadLetterId, String message) {
    super("dead letter " + deadLetterId + ": " + message);
    this.deadLetterId = deadLetterId;
  }

  public long deadLetterId() {
    return deadLetterId;
  }
}
