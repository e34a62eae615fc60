package org.rhumbatron.api;

import io.javalin.Javalin;
import io.javalin.http.Context;
import java.time.Duration;

/**
 * A node that is stopping answers every request that arrives from then on with 503 and {@code
 * Retry-After}, naming why, while the requests it already took run to their end: a client retries
 * on another node (a load balancer sees {@code /readyz} fail too), and nothing is cut half way.
 */
final class StopGate {
  private static final String ADMITTED = "rhumbatron.admitted";

  private final Object lock = new Object();
  private volatile String stopping;
  private int inFlight;

  /** Registers the gate; it must be the first before-handler, so that a refusal touches nothing. */
  void mount(Javalin app) {
    app.before(this::admit);
    app.after(
        ctx -> {
          if (ctx.attribute(ADMITTED) != null) {
            leave();
          }
        });
  }

  private void admit(Context ctx) {
    // Counted before the check: a request that passed it is seen by a drain that starts after.
    synchronized (lock) {
      inFlight++;
    }
    String why = stopping;
    if (why != null) {
      leave();
      throw new ApiException(503, null, why);
    }
    ctx.attribute(ADMITTED, Boolean.TRUE);
  }

  private void leave() {
    synchronized (lock) {
      inFlight--;
      lock.notifyAll();
    }
  }

  /**
   * Refuses every request from now on with {@code why}, and waits at most {@code within} for the
   * requests in flight; returns how many are still running.
   */
  int close(String why, Duration within) throws InterruptedException {
    stopping = why;
    long deadline = System.nanoTime() + within.toNanos();
    synchronized (lock) {
      while (inFlight > 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          break;
        }
        lock.wait(Math.max(1, left / 1_000_000));
      }
      return inFlight;
    }
  }
}
