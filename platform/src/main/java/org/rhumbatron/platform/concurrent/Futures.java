package org.rhumbatron.platform.concurrent;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/** Small functions for CompletableFuture outcomes. */
public final class Futures {
  private Futures() {}

  /**
   * The failure a dependent stage or {@code join()} reports, without the CompletionException that
   * CompletableFuture wraps it in: what the work itself threw.
   */
  public static Throwable unwrap(Throwable error) {
    return error instanceof CompletionException && error.getCause() != null
        ? error.getCause()
        : error;
  }

  /**
   * Completes {@code to} with what {@code from} completes with, its failure {@link #unwrap
   * unwrapped}. The stage returned completes after {@code to} did (and after what {@code to} ran on
   * completing).
   */
  public static <T> CompletionStage<T> relay(
      CompletionStage<T> from, CompletableFuture<? super T> to) {
    return from.whenComplete(
        (result, error) -> {
          if (error == null) {
            to.complete(result);
          } else {
            to.completeExceptionally(unwrap(error));
          }
        });
  }
}
