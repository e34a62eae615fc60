package org.rhumbatron.platform.eventlog;

/**
 * The server refused a publish because the stream's last message is not the one the publisher
 * expected ({@code Nats-Expected-Last-Msg-Id}): an earlier send is missing or another producer
 * wrote in between. Not the message's fault; the publisher resynchronises and sends again.
 */
public final class PredecessorMissingException extends EventLogException {
  public PredecessorMissingException(String message, Throwable cause) {
    super(message, cause);
  }
}
