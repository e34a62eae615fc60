package org.rhumbatron.platform.queue;

import org.rhumbatron.protocol.Queue;
import org.rhumbatron.protocol.RhumbatronException;

/** A queue consumer could not be created or bound; the message names the queue. */
public final class QueueException extends RhumbatronException {
  private final Queue queue;

  public QueueException(Queue queue, String what, Throwable cause) {
    super("queue " + queue.wireName() + " (" + queue.durableName() + "): " + what, cause);
    this.queue = queue;
  }

  public Queue queue() {
    return queue;
  }
}
