package org.rhumbatron.lifecycle.workflow;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;
import java.util.Objects;

/**
 * What a step sees: its instance, the instance's input, and the results of the steps before it (by
 * name, in step order; a step that returned nothing reads as JSON null). Read from the database for
 * each step, so changing it changes nothing stored.
 */
public record StepContext(String instanceId, ObjectNode input, Map<String, JsonNode> results) {
  public StepContext {
    Objects.requireNonNull(instanceId, "instanceId");
    Objects.requireNonNull(input, "input");
    Objects.requireNonNull(results, "results");
  }

  /**
   * The result of an earlier step.
   *
   * @throws IllegalArgumentException naming the step when it is not done (a later or unknown step)
   */
  public JsonNode result(String step) {
    JsonNode result = results.get(step);
    if (result == null) {
      throw new IllegalArgumentException(
          "workflow " + instanceId + ": step " + step + " is not done before this one");
    }
    return result;
  }
}
