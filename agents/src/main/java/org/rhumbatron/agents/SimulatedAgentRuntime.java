package org.rhumbatron.agents;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.lifecycle.tasks.TaskInfo;
import org.rhumbatron.lifecycle.tasks.TaskNotHeldException;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.platform.concurrent.DaemonThreads;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.protocol.Fnv1a;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Agents simulated in core, for the demo, the tests and the benchmarks. For each Task attempt it
 * handed out, after {@code agents.simulated.step-delay} per step: the Task runs ({@code
 * task.running}), an intent per resource scope ({@code intent.declared}), a claim per scope ({@code
 * claim.acquired}), the changeset ({@code changeset.proposed}), the claims released ({@code
 * claim.released}), then {@code task.completed}, or {@code task.failed} for a share {@code
 * agents.simulated.failure-rate} of attempts. Each step is a state change through its owning shard.
 * Whether an attempt fails depends only on the seed, the Task and the attempt, so a run is
 * reproducible whatever the interleaving.
 *
 * <p>Its Agents live in core, so a restarted core picks up what they held ({@link #resumeHeld});
 * every step is idempotent, so a step done before the crash writes nothing the second time. A step
 * that fails for a reason a retry can cure (the database full or away) is tried again, with pauses
 * growing to 30 s, for as long as the Agent holds the Task; a permanent refusal (the Task no longer
 * held, the Change ended) ends the attempt. {@link #stop} (its Change ended) ends it at once: no
 * step runs after it.
 */
public final class SimulatedAgentRuntime implements AgentRuntime {
  private static final Logger log = LoggerFactory.getLogger(SimulatedAgentRuntime.class);
  // Tries before a transient failure is logged; the agent keeps trying while it holds the Task.
  private static final int STEP_TRIES = 3;
  private static final Duration RETRY_PAUSE = Duration.ofSeconds(1);
  private static final Duration RETRY_PAUSE_MAX = Duration.ofSeconds(30);
  private static final int RESUME_LIMIT = 10_000;

  private final Lifecycle lifecycle;
  private final Duration stepDelay;
  private final double failureRate;
  private final int seed;
  private final ExecutorService pool =
      Executors.newFixedThreadPool(2, DaemonThreads.named("simulated-agent"));
  // Per Task attempt at work, its stop signal.
  private final Map<String, CompletableFuture<Void>> working = new ConcurrentHashMap<>();
  private volatile boolean closed;
  // Steps that failed and will be tried again; a test awaits it instead of sleeping.
  private final AtomicLong retriedSteps = new AtomicLong();

  public SimulatedAgentRuntime(Lifecycle lifecycle, Settings settings) {
    this.lifecycle = lifecycle;
    this.stepDelay = settings.get(Settings.SIMULATED_STEP_DELAY);
    this.failureRate = settings.get(Settings.SIMULATED_FAILURE_RATE);
    this.seed = settings.get(Settings.SIMULATED_SEED);
  }

  @Override
  public void start(TaskRef task) {
    String key = key(task);
    CompletableFuture<Void> stop = new CompletableFuture<>();
    if (closed || working.putIfAbsent(key, stop) != null) {
      return;
    }
    CompletableFuture.anyOf(run(task, stop), stop)
        .whenComplete((ok, error) -> working.remove(key, stop));
  }

  @Override
  public void stop(TaskRef task, String reason) {
    CompletableFuture<Void> stop = working.get(key(task));
    if (stop != null && stop.complete(null)) {
      log.debug("simulated agent of {} stops: {}", task.taskId(), reason);
    }
  }

  /** Whether an Agent works on the Task attempt. */
  boolean works(TaskRef task) {
    return working.containsKey(key(task));
  }

  private static String key(TaskRef task) {
    return task.taskId() + "#" + task.attempt();
  }

  /** Starts every Task attempt an Agent holds in an open Change (after a restart); how many. */
  public int resumeHeld() {
    List<TaskRef> held = lifecycle.changes().heldTasks(RESUME_LIMIT);
    held.forEach(this::start);
    if (!held.isEmpty()) {
      log.info("simulated agents resume {} held tasks", held.size());
    }
    return held.size();
  }

  /** Whether the attempt fails: a draw from the seed, the Task and the attempt only. */
  boolean fails(TaskRef task) {
    if (failureRate <= 0) {
      return false;
    }
    long mix = ((long) seed << 32) ^ Fnv1a.fnv1a32(task.taskId() + "#" + task.attempt());
    return new SplittableRandom(mix).nextDouble() < failureRate;
  }

  private CompletableFuture<Void> run(TaskRef task, CompletableFuture<Void> stop) {
    CompletableFuture<List<String>> scopes =
        step(stop, () -> CompletableFuture.completedFuture(scopesOf(task)));
    return scopes
        .thenCompose(keys -> step(stop, () -> lifecycle.agents().start(task)).thenApply(v -> keys))
        .thenCompose(
            keys ->
                each(stop, keys, k -> lifecycle.agents().declareIntent(task, k))
                    .thenApply(v -> keys))
        .thenCompose(
            keys ->
                each(stop, keys, k -> lifecycle.agents().acquireClaim(task, k))
                    .thenApply(v -> keys))
        .thenCompose(
            keys ->
                step(stop, () -> lifecycle.agents().proposeChangeset(task)).thenApply(v -> keys))
        .thenCompose(keys -> each(stop, keys, k -> lifecycle.agents().releaseClaim(task, k)))
        .thenCompose(
            v ->
                step(
                    stop,
                    () ->
                        fails(task)
                            ? lifecycle.agents().fail(task, "simulated failure")
                            : lifecycle.agents().complete(task)))
        .exceptionally(
            error -> {
              Throwable cause = error instanceof CompletionException ? error.getCause() : error;
              if (cause instanceof TaskNotHeldException || cause instanceof Stopped) {
                log.debug("simulated agent stops: {}", cause.getMessage());
              } else if (!closed) {
                log.warn("simulated agent of {} gave up: {}", task.taskId(), cause.toString());
              }
              return null;
            });
  }

  private List<String> scopesOf(TaskRef task) {
    return lifecycle.changes().task(task.taskId()).map(TaskInfo::resourceScopes).orElse(List.of());
  }

  private CompletableFuture<Void> each(
      CompletableFuture<Void> stop,
      List<String> keys,
      java.util.function.Function<String, CompletableFuture<?>> action) {
    CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
    for (String k : keys) {
      chain = chain.thenCompose(v -> step(stop, () -> action.apply(k)).thenApply(x -> null));
    }
    return chain;
  }

  /** The Agent was told to stop: no step runs after it. */
  private static final class Stopped extends RuntimeException {
    Stopped() {
      super("told to stop", null, false, false);
    }
  }

  /**
   * One step after the step delay, unless the Agent was told to stop; a failure other than "not
   * held" is tried again.
   */
  private <T> CompletableFuture<T> step(
      CompletableFuture<Void> stop, Supplier<CompletableFuture<T>> action) {
    Supplier<CompletableFuture<T>> unlessStopped =
        () -> stop.isDone() ? CompletableFuture.failedFuture(new Stopped()) : action.get();
    return attempt(unlessStopped, 1, stepDelay);
  }

  private <T> CompletableFuture<T> attempt(
      Supplier<CompletableFuture<T>> action, int tryNumber, Duration delay) {
    if (closed) {
      return CompletableFuture.failedFuture(new IllegalStateException("runtime closed"));
    }
    Executor after =
        delay.isZero()
            ? pool
            : CompletableFuture.delayedExecutor(delay.toMillis(), TimeUnit.MILLISECONDS, pool);
    return CompletableFuture.supplyAsync(action, after)
        .thenCompose(f -> f)
        .handle(
            (value, error) -> {
              if (error == null) {
                return CompletableFuture.completedFuture(value);
              }
              Throwable cause = error instanceof CompletionException ? error.getCause() : error;
              boolean hopeless =
                  cause instanceof LifecycleException e && e.permanent()
                      || cause instanceof Stopped;
              if (hopeless || closed) {
                return CompletableFuture.<T>failedFuture(cause);
              }
              if (tryNumber == STEP_TRIES) {
                log.warn(
                    "simulated agent step failed {} times, still trying: {}", tryNumber, cause);
              }
              retriedSteps.incrementAndGet();
              return attempt(action, tryNumber + 1, pauseAfter(tryNumber));
            })
        .thenCompose(f -> f);
  }

  /** How many times a step failed and was tried again. */
  long retriedSteps() {
    return retriedSteps.get();
  }

  /** 1 s, 2 s, 4 s ... at most 30 s: a database outage of minutes ends, and the step goes on. */
  static Duration pauseAfter(int tryNumber) {
    long factor = 1L << Math.min(tryNumber - 1, 16);
    Duration pause = RETRY_PAUSE.multipliedBy(factor);
    return pause.compareTo(RETRY_PAUSE_MAX) > 0 ? RETRY_PAUSE_MAX : pause;
  }

  @Override
  public void close() {
    closed = true;
    pool.shutdownNow();
  }
}
