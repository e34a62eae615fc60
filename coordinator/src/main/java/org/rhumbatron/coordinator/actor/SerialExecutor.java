package org.rhumbatron.coordinator.actor;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;

/**
 * Runs its tasks one at a time, in submission order, on a shared pool: an actor's turn-based
 * concurrency (one transaction at a time per actor, different actors in parallel).
 */
public final class SerialExecutor implements Executor {
  private final Executor pool;
  private final Queue<Runnable> tasks = new ArrayDeque<>();
  private boolean running;

  public SerialExecutor(Executor pool) {
    this.pool = pool;
  }

  @Override
  public void execute(Runnable task) {
    synchronized (tasks) {
      tasks.add(task);
      if (running) {
        return;
      }
      running = true;
    }
    pool.execute(this::drain);
  }

  /** True when nothing is queued or running (the runtime unloads only idle actors). */
  public boolean isIdle() {
    synchronized (tasks) {
      return !running && tasks.isEmpty();
    }
  }

  private void drain() {
    while (true) {
      Runnable next;
      synchronized (tasks) {
        next = tasks.poll();
        if (next == null) {
          running = false;
          return;
        }
      }
      try {
        next.run();
      } catch (RuntimeException e) {
        // Tasks complete their own futures; a stray exception must not stop the actor.
        Thread t = Thread.currentThread();
        t.getUncaughtExceptionHandler().uncaughtException(t, e);
      }
    }
  }
}
