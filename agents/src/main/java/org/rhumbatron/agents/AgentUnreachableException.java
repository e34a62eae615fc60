package org.rhumbatron.agents;

import org.rhumbatron.protocol.RhumbatronException;

/**
 * The runtime could not hand the Task to its Agent (a webhook that timed out or answered non-2xx);
 * the wake consumer asks the queue for a retry, so the wake comes again after the retry delay.
 */
public final class AgentUnreachableException extends RhumbatronException {
  public AgentUnreachableException(String message) {
    super(message);
  }

  public AgentUnreachableException(String message, Throwable cause) {
    super(message, cause);
  }
}
