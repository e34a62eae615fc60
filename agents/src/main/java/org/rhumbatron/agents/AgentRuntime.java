package org.rhumbatron.agents;

import org.rhumbatron.lifecycle.tasks.TaskRef;
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

  /**
   * The Change of {@code task} ended, so the Task was cancelled ({@code task.cancelled}, {@code
   * reason} {@code change_failed}, {@code change_cancelled}, ...): the Agent stops working on it.
   * Called once after the end committed; it must not block, and a lost call costs only the Agent's
   * time (each later report of it is refused with nothing written).
   */
  default void stop(TaskRef task, String reason) {}

  @Override
  default void close() {}
}
