package org.rhumbatron.platform.config;

/** Which {@code AgentRuntime} core hands a relevant wake to ({@code agents.runtime}). */
public enum AgentRuntimeKind {
  /** Agents simulated in core (the demo, the tests, the benchmarks). */
  SIMULATED,
  /** A POST of the Task to {@code agents.webhook.url}; the Agent reports through the HTTP API. */
  WEBHOOK
}
