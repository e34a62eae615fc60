package org.rhumbatron.api;

import java.time.Clock;
import java.util.Objects;

/**
 * Who may use the API: the operator token of the settings ({@code api.token}, empty: none), whether
 * reads need a credential, whether {@code /metrics} does, and the request rate per credential; the
 * clock the rate limits and the credentials' times read.
 */
public record ApiAccess(
    String apiToken, boolean readsOpen, boolean metricsClosed, int rateLimit, Clock clock) {
  public ApiAccess {
    Objects.requireNonNull(clock, "clock");
    if (rateLimit <= 0) {
      throw new IllegalArgumentException("rateLimit must be > 0, got " + rateLimit);
    }
    apiToken = apiToken == null || apiToken.isEmpty() ? null : apiToken;
  }

  // The operator token is a secret: never in a log line.
  @Override
  public String toString() {
    return "ApiAccess[token "
        + (apiToken == null ? "none" : "set")
        + ", reads "
        + (readsOpen ? "open" : "need a credential")
        + ", metrics "
        + (metricsClosed ? "need a credential" : "open")
        + ", "
        + rateLimit
        + " requests/s per credential]";
  }
}
