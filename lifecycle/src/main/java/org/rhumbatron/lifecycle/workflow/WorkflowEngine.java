package org.rhumbatron.lifecycle.workflow;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.rhumbatron.platform.db.Database;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs Workflow instances durably: each instance is a row, each step done keeps its result, and an
 * instance runs its steps in order until all are done ({@code completed}) or one threw on every try
 * ({@code failed}).
 *
 * <ul>
 *   <li><b>One instance per id.</b> {@link #start} inserts the instance {@code ON CONFLICT DO
 *       NOTHING}: a second start with the same id, even racing from another thread or process, is
 *       {@link Start#ALREADY_STARTED} and starts nothing (the seed's "the workflow engine rejects a
 *       second instance with the same ID"). A redelivered start command can ack on it.
 *   <li><b>Resume.</b> A run skips the steps whose result is stored, so after a crash {@link
 *       #resumeAll} (at start) or a redelivered {@link #start} carries the instance on at its next
 *       step.
 *   <li><b>At least once, so idempotent.</b> A step's effect and its result row are not one
 *       transaction: a crash between them runs the step again, as does a retry after it threw.
 *       Steps must be idempotent (e.g. write Events with stable ids: the outbox ignores the
 *       repeat). Two processes on one database may run one instance's step at the same time; the
 *       first result stored wins and the later steps see it.
 *   <li><b>One run per instance in this process</b>: a start or resume while an instance runs here
 *       does nothing, so no step of it runs twice at once here.
 * </ul>
 *
 * <p>Runs go on the given executor; a step that throws is tried again after {@code retryPause}
 * (without holding a thread), up to {@code stepTries} tries in all, then the definition's failure
 * hook is told and the instance is failed. A run the database fails (storing a result, reading the
 * instance) goes on after a pause growing to 30 s, the instance still running; a step that throws
 * an {@link Error} stops with the instance left running, for the next start or resume. Every time
 * written comes from the given clock. Thread-safe.
 */
public final class WorkflowEngine implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(WorkflowEngine.class);

  /** The longest pause before a run that the database failed goes on. */
  static final Duration DATABASE_PAUSE_MAX = Duration.ofSeconds(30);

  /** What {@link #start} did. */
  public enum Start {
    /** A new instance was stored; it runs now, asynchronously. */
    STARTED,
    /** An instance with this id exists (in any state, of any type); nothing new was stored. */
    ALREADY_STARTED
  }

  private final WorkflowStore store;
  private final Clock clock;
  private final Executor executor;
  private final int stepTries;
  private final Duration retryPause;
  private final Map<String, WorkflowDefinition> definitions = new ConcurrentHashMap<>();
  private final Set<String> inFlight = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  /**
   * @param stepTries how many times a step is tried before its instance fails (at least 1)
   * @param retryPause the pause before a step is tried again
   */
  public WorkflowEngine(
      Database database, Clock clock, Executor executor, int stepTries, Duration retryPause) {
    this.store = new WorkflowStore(Objects.requireNonNull(database, "database"));
    this.clock = Objects.requireNonNull(clock, "clock");
    this.executor = Objects.requireNonNull(executor, "executor");
    this.retryPause = Objects.requireNonNull(retryPause, "retryPause");
    if (stepTries < 1) {
      throw new IllegalArgumentException("stepTries must be at least 1, was " + stepTries);
    }
    if (retryPause.isNegative()) {
      throw new IllegalArgumentException("retryPause must not be negative, was " + retryPause);
    }
    this.stepTries = stepTries;
  }

  /**
   * Makes a Workflow type known; register every type before {@link #resumeAll}.
   *
   * @throws IllegalStateException when another definition has this type
   */
  public void register(WorkflowDefinition definition) {
    WorkflowDefinition before = definitions.putIfAbsent(definition.type(), definition);
    if (before != null && before != definition) {
      throw new IllegalStateException("workflow type " + definition.type() + " is registered");
    }
  }

  /**
   * Starts an instance of {@code type} with id {@code instanceId} (e.g. a Candidate ID), unless one
   * with that id exists. Either way an instance that is still running and not running in this
   * process is run, so a start command redelivered after a crash resumes its instance.
   *
   * @param input kept with the instance and handed to every step; null is an empty object
   * @throws IllegalArgumentException naming the type when it is not registered
   * @throws IllegalStateException when the engine is closed
   */
  public Start start(String type, String instanceId, ObjectNode input) {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(instanceId, "instanceId");
    if (instanceId.isBlank()) {
      throw new IllegalArgumentException("workflow instance id must not be blank");
    }
    WorkflowDefinition definition = definition(type);
    checkOpen();
    ObjectNode stored = input == null ? JsonNodeFactory.instance.objectNode() : input;
    if (store.insert(instanceId, type, stored, clock.millis())) {
      log.debug("workflow {} {} started", type, instanceId);
      run(instanceId, definition);
      return Start.STARTED;
    }
    store
        .head(instanceId)
        .filter(head -> head.state() == WorkflowState.RUNNING)
        .ifPresent(head -> resume(head.instanceId(), head.type()));
    return Start.ALREADY_STARTED;
  }

  /**
   * Runs every instance still running that is not running in this process: call it once at start,
   * after registering the definitions, so that a Workflow interrupted by a crash resumes at its
   * next step. An instance of a type not registered is left as it is (logged).
   *
   * @return how many instances it set running
   */
  public int resumeAll() {
    checkOpen();
    int resumed = 0;
    for (WorkflowStore.Head head : store.running()) {
      if (resume(head.instanceId(), head.type())) {
        resumed++;
      }
    }
    log.info("resumed {} running workflow instances", resumed);
    return resumed;
  }

  /**
   * Runs a failed instance again from its first step not done (an operator's or a recovery sweep's
   * retry); false when the instance is not failed (running instances resume by themselves,
   * completed ones are done).
   */
  public boolean retryFailed(String instanceId) {
    checkOpen();
    Optional<WorkflowStore.Head> head = store.head(instanceId);
    if (head.isEmpty() || head.get().state() != WorkflowState.FAILED) {
      return false;
    }
    if (!store.reopen(instanceId, clock.millis())) {
      return false;
    }
    log.info("workflow {} {} runs again after it failed", head.get().type(), instanceId);
    return resume(instanceId, head.get().type());
  }

  /** The instance as stored, with its steps done. */
  public Optional<WorkflowInstance> instance(String instanceId) {
    return store.instance(instanceId);
  }

  /**
   * Stops taking work: no new start or resume, and a run stops before its next step or retry,
   * leaving its instance running for a later resume. A step running now is not interrupted (shut
   * the executor down for that); its result is still stored if the database is open.
   */
  @Override
  public void close() {
    closed = true;
  }

  private WorkflowDefinition definition(String type) {
    WorkflowDefinition definition = definitions.get(type);
    if (definition == null) {
      throw new IllegalArgumentException("unknown workflow type " + type);
    }
    return definition;
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("the workflow engine is closed");
    }
  }

  private boolean resume(String instanceId, String type) {
    WorkflowDefinition definition = definitions.get(type);
    if (definition == null) {
      log.warn("workflow {} is running but its type {} is not registered", instanceId, type);
      return false;
    }
    return run(instanceId, definition);
  }

  /** Sets the instance running on the executor unless it runs here already. */
  private boolean run(String instanceId, WorkflowDefinition definition) {
    if (!inFlight.add(instanceId)) {
      return false;
    }
    Run run = new Run(instanceId, definition);
    try {
      executor.execute(run::advance);
    } catch (RuntimeException e) {
      inFlight.remove(instanceId);
      throw e;
    }
    return true;
  }

  /** One run of one instance, from its next step to its end or to a pause before a retry. */
  private final class Run {
    final String instanceId;
    final WorkflowDefinition definition;
    int failedTries; // of the current step
    int databaseFailures; // in a row, of this run's reads and writes

    Run(String instanceId, WorkflowDefinition definition) {
      this.instanceId = instanceId;
      this.definition = definition;
    }

    void advance() {
      boolean paused = false;
      try {
        paused = steps();
        databaseFailures = 0;
      } catch (RuntimeException e) {
        paused = databaseFailed(e);
      } catch (Error e) {
        log.error(
            "workflow {} {} stopped and stays running, for the next start or resume",
            definition.type(),
            instanceId,
            e);
      } finally {
        if (!paused) {
          inFlight.remove(instanceId);
        }
      }
    }

    /** Runs steps until the instance ends or the engine closes; true when a retry is scheduled. */
    private boolean steps() {
      List<Step> steps = definition.steps();
      while (!closed) {
        Optional<WorkflowInstance> stored = store.instance(instanceId);
        if (stored.isEmpty() || stored.get().state() != WorkflowState.RUNNING) {
          return false;
        }
        WorkflowInstance instance = stored.get();
        int next = 0;
        while (next < steps.size() && instance.results().containsKey(steps.get(next).name())) {
          next++;
        }
        if (next == steps.size()) {
          if (store.complete(instanceId, clock.millis())) {
            log.debug("workflow {} {} completed", definition.type(), instanceId);
          }
          return false;
        }
        Step step = steps.get(next);
        JsonNode result;
        try {
          result = step.fn().run(new StepContext(instanceId, instance.input(), instance.results()));
        } catch (InterruptedException e) {
          // The executor is shutting down: not the step's failure.
          Thread.currentThread().interrupt();
          return false;
        } catch (Exception e) {
          return failed(step, instance.input(), e);
        }
        store.storeResult(instanceId, step.name(), next, result, clock.millis());
        failedTries = 0;
      }
      return false;
    }

    /**
     * The database failed a read or a write of the run (full, restarting, away): not the step's
     * fault, so the instance is not failed; the run goes on after a pause growing to {@link
     * #DATABASE_PAUSE_MAX}, from its first step without a stored result.
     */
    private boolean databaseFailed(RuntimeException e) {
      if (closed) {
        log.info(
            "workflow {} {} stops while closing: {}", definition.type(), instanceId, e.toString());
        return false;
      }
      databaseFailures++;
      Duration pause = retryPause.multipliedBy(1L << Math.min(databaseFailures - 1, 16));
      if (pause.compareTo(DATABASE_PAUSE_MAX) > 0) {
        pause = DATABASE_PAUSE_MAX;
      }
      log.warn(
          "workflow {} {}: the database failed ({} in a row), running again in {}: {}",
          definition.type(),
          instanceId,
          databaseFailures,
          pause,
          e.toString());
      Executor later =
          CompletableFuture.delayedExecutor(
              pause.toNanos(), TimeUnit.NANOSECONDS, this::onExecutor);
      later.execute(this::advance);
      return true;
    }

    /** A try of {@code step} threw: pause and try again, or fail the instance. */
    private boolean failed(Step step, ObjectNode input, Exception e) {
      failedTries++;
      String error =
          "step " + step.name() + " (try " + failedTries + " of " + stepTries + "): " + e;
      if (closed) {
        log.info("workflow {} {} {} while closing", definition.type(), instanceId, error);
        return false;
      }
      if (failedTries < stepTries) {
        log.warn("workflow {} {} {}; trying again", definition.type(), instanceId, error);
        store.noteError(instanceId, error, clock.millis());
        Executor later =
            CompletableFuture.delayedExecutor(
                retryPause.toNanos(), TimeUnit.NANOSECONDS, this::onExecutor);
        later.execute(this::advance);
        return true;
      }
      log.error("workflow {} {} failed: {}", definition.type(), instanceId, error, e);
      String recorded = error;
      try {
        definition.failureHook().onFailed(instanceId, input, error);
      } catch (Exception hookError) {
        log.error(
            "workflow {} {}: the failure hook threw", definition.type(), instanceId, hookError);
        recorded = error + "; the failure hook threw: " + hookError;
      }
      store.fail(instanceId, recorded, clock.millis());
      return false;
    }

    /** Runs a retry on the engine's executor; a refused retry leaves the instance for a resume. */
    private void onExecutor(Runnable retry) {
      try {
        executor.execute(retry);
      } catch (RuntimeException e) {
        inFlight.remove(instanceId);
        log.warn(
            "workflow {} {}: retry refused by the executor: {}",
            definition.type(),
            instanceId,
            e.toString());
      }
    }
  }
}
