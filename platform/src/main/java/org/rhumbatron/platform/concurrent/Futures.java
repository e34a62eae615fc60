package org.rhumbatron.platform.concurrent;

import java.util.concurrent.CompletionException;

/** Small helpers for CompletableFuture outcomes. */
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
}
