package org.rhumbatron.lifecycle.workflow;

import java.util.Objects;

/**
 * One named step of a {@link WorkflowDefinition}. The name keys the step's stored result, so
 * renaming a step makes running instances run it again.
 */
public record Step(String name, StepFunction fn) {
  public Step {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(fn, "fn");
    if (name.isBlank()) {
      throw new IllegalArgumentException("step name must not be blank");
    }
  }
}
