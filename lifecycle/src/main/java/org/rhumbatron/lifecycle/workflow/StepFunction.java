package org.rhumbatron.lifecycle.workflow;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The work of one step. It may run more than once for one instance (a retry after it threw, or a
 * crash after its effect and before its result was stored), so its effect must be idempotent: for
 * example Events with stable ids, which the outbox writes once.
 */
@FunctionalInterface
public interface StepFunction {
  /**
   * Does the step's work.
   *
   * @return the step's result, kept and handed to the later steps; {@code null} stores JSON null
   * @throws Exception to have the step tried again (up to the engine's tries)
   */
  JsonNode run(StepContext context) throws Exception;
}
