package org.rhumbatron.platform.queue;

import org.rhumbatron.protocol.Queue;
import org.rhumbatron.protocol.RhumbatronException;

/**
 * A command (or a dead-letter message) was not stored on its queue; the caller decides what to do
 * (e.g. the Workflow producer starts the Workflow directly only then).
 */
public final class CommandSendException extends RhumbatronException {
  private final Queue queue;
  private final String messageId;

  public CommandSendException(Queue queue, String messageId, Throwable cause) {
    super(
        "cannot send "
            + messageId
            + " to "
            + queue.subject()
            + ": "
            + (cause == null ? "unknown error" : cause.toString()),
        cause);
    this.queue = queue;
    this.messageId = messageId;
  }

  public Queue queue() {
    return queue;
  }

  /** The {@code Nats-Msg-Id} of the failed send, e.g. {@code agent-wakeups:cmd_t1_ready}. */
  public String messageId() {
    return messageId;
  }
}
