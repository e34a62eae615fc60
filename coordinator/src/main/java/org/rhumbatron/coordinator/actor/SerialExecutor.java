package org.rhumbatron.coordinator.actor;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Runs its tasks one at a time, in submission order, on a shared pool: an actor's turn-based
 * concurrency (one transaction at a time per actor, different actors in parallel).
 */
public final class SerialExecutor implements Executor {
  /** Tasks a lane runs before it lets the pool's other lanes have the thread. */
  static final int TURN = 16;

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
    for (int ran = 0; ; ran++) {
      Runnable next;
      synchronized (tasks) {
        if (tasks.isEmpty()) {
          running = false;
          return;
        }
        if (ran == TURN) {
          // A lane that never runs dry must not keep its pool thread: give the other lanes a turn.
          yieldTurn();
          return;
        }
        next = tasks.poll();
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

  /** Queues the rest of this lane behind the pool's other work; still one drain at a time. */
  private void yieldTurn() {
    try {
      pool.execute(this::drain);
    } catch (RejectedExecutionException stopping) {
      running = false; // the pool is shutting down; what is queued here will not run
    }
  }
}
