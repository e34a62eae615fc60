package org.rhumbatron.platform.eventlog;

import org.rhumbatron.protocol.RhumbatronException;

/** The event log could not be read or written; the message names the stream. */
public class EventLogException extends RhumbatronException {
  public EventLogException(String message, Throwable cause) {
    super(message, cause);
  }
}
