package org.rhumbatron.lifecycle.workflow;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A Workflow type (e.g. {@code "verification"}, {@code "release"}) and its steps, run in order;
 * {@code failureHook} is told when an instance failed.
 *
 * <pre>{@code
 * WorkflowDefinition verification =
 *     WorkflowDefinition.of("verification", new Step("verify", ctx -> verifier.verify(ctx.input())),
 *             new Step("report", ctx -> report(ctx.instanceId(), ctx.result("verify"))))
 *         .onFailed((id, input, error) -> reject(id, error));
 * }</pre>
 */
public record WorkflowDefinition(String type, List<Step> steps, FailureHook failureHook) {

  /** Told once a step of an instance threw on every try, before the instance is marked failed. */
  @FunctionalInterface
  public interface FailureHook {
    FailureHook NONE = (instanceId, input, error) -> {};

    /**
     * Reacts to a failed instance. A crash before the instance is marked failed tells it again
     * after the resume, so it must be idempotent like a step. An exception is logged and added to
     * the instance's {@code last_error}; the instance is failed all the same.
     *
     * @param error the text kept in {@code last_error}: the step, the try and the exception
     */
    void onFailed(String instanceId, ObjectNode input, String error) throws Exception;
  }

  public WorkflowDefinition {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(failureHook, "failureHook");
    steps = List.copyOf(steps);
    if (type.isBlank()) {
      throw new IllegalArgumentException("workflow type must not be blank");
    }
    if (steps.isEmpty()) {
      throw new IllegalArgumentException("workflow " + type + " has no steps");
    }
    Set<String> names = new HashSet<>();
    for (Step step : steps) {
      if (!names.add(step.name())) {
        throw new IllegalArgumentException(
            "workflow " + type + " has two steps named " + step.name());
      }
    }
  }

  /** A definition of these steps, in this order, without a failure hook. */
  public static WorkflowDefinition of(String type, Step... steps) {
    return new WorkflowDefinition(type, List.of(steps), FailureHook.NONE);
  }

  /** This definition with {@code hook} told of failed instances. */
  public WorkflowDefinition onFailed(FailureHook hook) {
    return new WorkflowDefinition(type, steps, hook);
  }
}
