package org.rhumbatron.integration;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/** Waits for a lifecycle step or a send, at most {@code integration.step-timeout}. */
final class Steps {
  private final Duration timeout;

  Steps(Duration timeout) {
    this.timeout = timeout;
  }

  /** The step's result; its failure is thrown as itself (a LifecycleException stays one). */
  <T> T await(CompletableFuture<T> step) throws Exception {
    try {
      return step.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | CompletionException e) {
      throw e.getCause() instanceof Exception cause ? cause : e;
    }
  }
}
