package org.rhumbatron.agents;

import org.rhumbatron.lifecycle.TaskRef;
import org.rhumbatron.protocol.Command;

/**
 * Where a relevant wake goes: the Agent of {@code task} works on it and reports every step through
 * the {@link org.rhumbatron.lifecycle.Lifecycle} (running, intents, claims, changeset, completed or
 * failed). {@link #start} returns at once; the work goes on without the wake consumer.
 */
public interface AgentRuntime extends AutoCloseable {

  /** Hands the Task to its Agent; a second call for the same Task attempt changes nothing. */
  void start(TaskRef task);

  /**
   * The Agent already running {@code task} is woken by an Event of the causal router (a resource
   * Event on an overlapping scope, a new canonical base): {@code wake} names it in its payload.
   */
  default void woken(TaskRef task, Command wake) {}

  @Override
  default void close() {}
}
