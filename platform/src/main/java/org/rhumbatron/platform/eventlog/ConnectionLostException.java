package org.rhumbatron.platform.eventlog;

/**
 * The connection dropped before the PubAck came. Not the message's fault: the publisher sends it
 * again (the server drops a repeat by its {@code Nats-Msg-Id}) and counts no attempt.
 */
public final class ConnectionLostException extends EventLogException {
  public ConnectionLostException(String message) {
    super(message, null);
  }
}
