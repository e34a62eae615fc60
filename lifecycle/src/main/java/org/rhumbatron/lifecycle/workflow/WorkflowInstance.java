package org.rhumbatron.lifecycle.workflow;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;

/**
 * A Workflow instance as stored: {@code results} holds the steps done, by name, in step order;
 * {@code lastError} is the last failed try of a step (kept after a later try succeeded), or null.
 */
public record WorkflowInstance(
    String instanceId,
    String type,
    WorkflowState state,
    ObjectNode input,
    String lastError,
    Map<String, JsonNode> results) {

  /** The names of the steps done, in step order. */
  public List<String> stepsDone() {
    return List.copyOf(results.keySet());
  }
}
