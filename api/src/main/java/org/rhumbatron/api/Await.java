package org.rhumbatron.api;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** A handler waits for its actor's answer, and rethrows the actor's refusal as it was thrown. */
final class Await {
  static final Duration TIMEOUT = Duration.ofSeconds(30);

  private Await() {}

  static <T> T result(CompletableFuture<T> future) {
    try {
      return future.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | CompletionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      throw new IllegalStateException(cause);
    } catch (TimeoutException e) {
      throw new ApiException(503, null, "no answer from core within " + TIMEOUT.toSeconds() + "s");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ApiException(503, null, "interrupted while waiting for core");
    }
  }
}
