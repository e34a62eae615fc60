package org.rhumbatron.agents;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.tasks.TaskInfo;
import org.rhumbatron.lifecycle.tasks.TaskNotHeldException;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.lifecycle.tasks.TaskState;
import org.rhumbatron.platform.metrics.Metrics;
import org.rhumbatron.platform.queue.Delivery;
import org.rhumbatron.platform.queue.Outcome;
import org.rhumbatron.platform.queue.QueueHandler;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The consumer of {@code agent-wakeups} (the seed's {@code wake-consumer.ts}). It checks a wake's
 * relevance again: the Task is still assigned to this Agent for this attempt, has not ended, and
 * its Change is open. A stale wake ends at once and counts one {@code false_wakeup} in METRICS; a
 * dispatcher's wake for a Task the same Agent already runs is a duplicate and ends quietly; a
 * relevant wake writes {@code agent.woken} and hands the Task to the {@link AgentRuntime}. A causal
 * router's wake (its payload names the Event, e.g. an overlapping intent) of a running Task is
 * relevant too: the running Agent is told ({@link AgentRuntime#woken}).
 */
public final class WakeConsumer implements QueueHandler<Command> {
  public static final String FALSE_WAKEUP = "false_wakeup";

  /** A dispatcher's wake of a Task its Agent already runs: a repeat, not a false wakeup. */
  public static final String REPEAT_WAKEUP = "repeat_wakeup";

  /** Why a wake is stale: the {@code reason} label of its {@code false_wakeup} point. */
  public enum StaleReason {
    /** The Task's Change is no longer open. */
    CHANGE_ENDED,
    /** The Task completed. */
    TASK_COMPLETED,
    /** The Task's attempt failed (failed or blocked). */
    TASK_FAILED,
    /** The Task is in another state an Agent does not hold (pending, ready, ...). */
    TASK_NOT_HELD,
    /** The Task's current attempt is another Agent's. */
    REASSIGNED,
    /** The same Agent holds a later attempt. */
    OTHER_ATTEMPT,
    /** The Task changed between the check and the {@code agent.woken} write. */
    MOVED;

    public String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** A stale wake's reason and its words for the log. */
  private record Stale(StaleReason reason, String detail) {}

  private static final Logger log = LoggerFactory.getLogger(WakeConsumer.class);
  private static final Duration STEP_TIMEOUT = Duration.ofSeconds(30);

  private final Lifecycle lifecycle;
  private final AgentRuntime runtime;
  private final Metrics metrics;

  public WakeConsumer(Lifecycle lifecycle, AgentRuntime runtime, Metrics metrics) {
    this.lifecycle = lifecycle;
    this.runtime = runtime;
    this.metrics = metrics;
  }

  @Override
  public Outcome handle(Command wake, Delivery delivery) throws Exception {
    if (wake.commandType() != CommandType.AGENT_WAKE) {
      return Outcome.reject(
          "agent-wakeups takes only agent.wake, not " + wake.commandType().wireName());
    }
    String agentId = wake.payload().path("agentId").asText("");
    int attempt = wake.payload().path("attempt").asInt(0);
    if (wake.taskId() == null || agentId.isBlank() || attempt < 1) {
      return Outcome.reject(
          "agent.wake "
              + wake.commandId()
              + ": needs a taskId and a payload with agentId and attempt (1 or more)");
    }
    Optional<TaskInfo> task = lifecycle.changes().task(wake.taskId());
    if (task.isEmpty()) {
      return Outcome.reject("agent.wake " + wake.commandId() + ": unknown task " + wake.taskId());
    }
    TaskRef ref =
        new TaskRef(task.get().projectId(), task.get().changeId(), wake.taskId(), agentId, attempt);
    Stale stale = staleBecause(task.get(), ref);
    boolean causal = wake.payload().hasNonNull("eventId");
    // What sent the wake: "ready" (the dispatcher) or the causal Event's type.
    String source = wake.payload().path("reason").asText("unknown");
    if (stale == null && task.get().taskState() == TaskState.RUNNING && !causal) {
      log.debug("wake {} is a duplicate: {} runs {} already", wake.commandId(), agentId, ref);
      metrics.record(REPEAT_WAKEUP, 1, Map.of("source", source, "commandId", wake.commandId()));
      return Outcome.ack();
    }
    if (stale == null) {
      try {
        lifecycle
            .agents()
            .agentWoken(ref, wake.commandId())
            .get(STEP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        if (task.get().taskState() == TaskState.RUNNING) {
          runtime.woken(ref, wake);
        } else {
          runtime.start(ref);
        }
        return Outcome.ack();
      } catch (AgentUnreachableException e) {
        // agent.woken is written once per wake, so the retry writes nothing twice
        log.info("wake {}: {}; the queue retries it", wake.commandId(), e.getMessage());
        return Outcome.retry(null, e.getMessage());
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof TaskNotHeldException moved)) {
          throw e;
        }
        // it changed between the check and the write
        stale = new Stale(StaleReason.MOVED, moved.getMessage());
      }
    }
    metrics.record(
        FALSE_WAKEUP,
        1,
        Map.of(
            "reason", stale.reason().label(),
            "source", source,
            "detail", stale.detail(),
            "commandId", wake.commandId(),
            "taskId", wake.taskId()));
    log.info("stale wake {}: {}", wake.commandId(), stale.detail());
    return Outcome.ack();
  }

  /** Why the wake is stale, or null when the Agent still holds the Task for this attempt. */
  private Stale staleBecause(TaskInfo task, TaskRef ref) {
    Optional<ChangeInfo> change = lifecycle.changes().change(task.changeId());
    if (change.isEmpty() || change.get().changeState() != ChangeState.OPEN) {
      return new Stale(
          StaleReason.CHANGE_ENDED,
          "change " + task.changeId() + " is " + change.map(ChangeInfo::state).orElse("gone"));
    }
    if (!ref.agentId().equals(task.agentId()) || ref.attempt() != task.attempt()) {
      StaleReason reason =
          ref.agentId().equals(task.agentId()) ? StaleReason.OTHER_ATTEMPT : StaleReason.REASSIGNED;
      return new Stale(
          reason,
          "task "
              + task.taskId()
              + " attempt "
              + task.attempt()
              + " is "
              + (task.agentId() == null ? "unassigned" : "assigned to " + task.agentId())
              + ", not to "
              + ref.agentId()
              + " for attempt "
              + ref.attempt());
    }
    if (!task.held()) {
      StaleReason reason =
          task.completed()
              ? StaleReason.TASK_COMPLETED
              : task.failed() ? StaleReason.TASK_FAILED : StaleReason.TASK_NOT_HELD;
      return new Stale(reason, "task " + task.taskId() + " is " + task.state());
    }
    return null;
  }
}
