package org.rhumbatron.coordinator.actor;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Runs its tasks one at a time, in submission order, on a shared pool: an actor's turn-based
 * concurrency (one transaction at a time per actor, different actors in parallel).
 *
 * <p>A task submitted with {@link #executeAsync} holds the lane until the stage it returns
 * completes, without holding a thread: the lane's next task starts after that, on the thread that
 * completed the stage when it is an async task too (its body only queues work, so it cannot block
 * that thread), or on the pool when it is a plain task.
 */
public final class SerialExecutor implements Executor {
  /** Tasks a lane runs before it lets the pool's other lanes have the thread. */
  static final int TURN = 16;

  private final Executor pool;
  private final Queue<Object> tasks = new ArrayDeque<>(); // Runnable or AsyncTask
  private boolean running;

  /** A task that holds the lane until its stage completes. */
  @FunctionalInterface
  public interface AsyncTask {
    CompletionStage<?> start();
  }

  public SerialExecutor(Executor pool) {
    this.pool = pool;
  }

  @Override
  public void execute(Runnable task) {
    submit(task);
  }

  /**
   * Queues {@code task}; the lane's next task starts only when the stage that {@code task} returns
   * has completed (normally or not). {@code task} must not block: it starts work and returns.
   */
  public void executeAsync(AsyncTask task) {
    submit(task);
  }

  private void submit(Object task) {
    synchronized (tasks) {
      tasks.add(task);
      if (running) {
        return;
      }
      running = true;
    }
    pool.execute(() -> drain(false));
  }

  /** True when nothing is queued or running (the runtime unloads only idle actors). */
  public boolean isIdle() {
    synchronized (tasks) {
      return !running && tasks.isEmpty();
    }
  }

  /**
   * Runs queued tasks until the lane is empty, its turn is over, or an async task holds it. On a
   * borrowed thread ({@code inline}: the thread that completed an async task's stage) it runs only
   * async tasks and hands a plain one to the pool.
   */
  private void drain(boolean inline) {
    for (int ran = 0; ; ran++) {
      Object next;
      synchronized (tasks) {
        next = tasks.peek();
        if (next == null) {
          running = false;
          return;
        }
        if (ran == TURN || (inline && next instanceof Runnable)) {
          // A lane that never runs dry must not keep its pool thread (give the other lanes a
          // turn), and a plain task may block, so it does not run on a borrowed thread.
          yieldTurn();
          return;
        }
        tasks.poll();
      }
      if (next instanceof Runnable plain) {
        runSafely(plain);
        continue;
      }
      CompletableFuture<?> stage = start((AsyncTask) next);
      if (!stage.isDone()) {
        stage.whenComplete((r, e) -> drain(true));
        return; // the lane stays running: its next task waits for the stage
      }
    }
  }

  private static CompletableFuture<?> start(AsyncTask task) {
    try {
      CompletionStage<?> stage = task.start();
      return stage == null ? CompletableFuture.completedFuture(null) : stage.toCompletableFuture();
    } catch (RuntimeException | Error e) {
      report(e);
      return CompletableFuture.completedFuture(null);
    }
  }

  private static void runSafely(Runnable task) {
    try {
      task.run();
    } catch (RuntimeException e) {
      report(e);
    }
  }

  /** Tasks complete their own futures; a stray exception must not stop the actor. */
  private static void report(Throwable e) {
    Thread t = Thread.currentThread();
    t.getUncaughtExceptionHandler().uncaughtException(t, e);
  }

  /** Queues the rest of this lane behind the pool's other work; still one drain at a time. */
  private void yieldTurn() {
    try {
      pool.execute(() -> drain(false));
    } catch (RejectedExecutionException stopping) {
      running = false; // the pool is shutting down; what is queued here will not run
    }
  }
}
