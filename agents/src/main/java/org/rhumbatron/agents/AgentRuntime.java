package org.rhumbatron.agents;

import org.rhumbatron.lifecycle.TaskRef;
import org.rhumbatron.protocol.Command;

/**
 * Where a relevant wake goes: the Agent of {@code task} works on it and reports every step through
 * the {@link org.rhumbatron.lifecycle.Lifecycle} (running, intents, claims, changeset, completed or
 * failed). {@link #start} returns once the Agent has the Task; the work goes on without the wake
 * consumer. A runtime that cannot reach its Agent throws {@link AgentUnreachableException}: the
 * wake consumer asks for a retry, so the queue delivers the wake again (and dead-letters it after
 * its last retry).
 */
public interface AgentRuntime extends AutoCloseable {

  /**
   * Hands the Task to its Agent; a second call for the same Task attempt changes nothing.
   *
   * @throws AgentUnreachableException when the Agent did not take it
   */
  void start(TaskRef task);

  /**
   * The Agent already running {@code task} is woken by an Event of the causal router (a resource
   * Event on an overlapping scope, a new canonical base): {@code wake} names it in its payload.
   *
   * @throws AgentUnreachableException when the Agent was not told
   */
  default void woken(TaskRef task, Command wake) {}

  @Override
  default void close() {}
}
