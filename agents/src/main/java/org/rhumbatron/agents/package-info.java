/**
 * Agents (the seed's {@code workers/agents}): the wake consumer of {@code agent-wakeups}, which
 * checks a wake's relevance again and hands relevant ones to an {@link
 * org.rhumbatron.agents.AgentRuntime}; and the simulated runtime that core ships.
 */
package org.rhumbatron.agents;
