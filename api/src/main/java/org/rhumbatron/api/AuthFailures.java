package org.rhumbatron.api;

import java.time.Clock;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refused requests, counted by reason for {@code /metrics}; a source's failed authentications are
 * logged at most once per {@link #LOG_EVERY}, with how many were not, so a client that guesses
 * tokens cannot fill the log.
 */
public final class AuthFailures {
  static final Duration LOG_EVERY = Duration.ofMinutes(1);
  private static final int MAX_SOURCES = 10_000;
  private static final Logger log = LoggerFactory.getLogger(AuthFailures.class);

  /** Why a request was refused. */
  public enum Reason {
    /** No credential where the route needs one. */
    MISSING,
    /** A credential that is unknown, revoked or malformed. */
    INVALID,
    /** A valid credential whose role may not take the route. */
    FORBIDDEN,
    /** Over its credential's request rate. */
    RATE_LIMITED;

    public String wireName() {
      return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }
  }

  private final Clock clock;
  private final Map<Reason, AtomicLong> counts = new EnumMap<>(Reason.class);
  private final Map<String, Window> sources = new ConcurrentHashMap<>();

  AuthFailures(Clock clock) {
    this.clock = clock;
    for (Reason r : Reason.values()) {
      counts.put(r, new AtomicLong());
    }
  }

  /** Requests refused for {@code reason} since start. */
  public long count(Reason reason) {
    return counts.get(reason).get();
  }

  void failed(String source, Reason reason, String why) {
    counts.get(reason).incrementAndGet();
    if (reason == Reason.RATE_LIMITED || reason == Reason.FORBIDDEN) {
      return; // the credential was good: not a failed authentication to watch for
    }
    long now = clock.millis();
    if (sources.size() > MAX_SOURCES) {
      sources.values().removeIf(w -> w.quietSince(now));
    }
    Window w = sources.computeIfAbsent(source, s -> new Window());
    long unlogged = w.logNow(now);
    if (unlogged >= 0) {
      log.warn(
          "failed authentication from {}: {}{}",
          source,
          why,
          unlogged == 0 ? "" : " (" + unlogged + " more in the minute before, not logged)");
    }
  }

  private static final class Window {
    private long loggedAtMs = Long.MIN_VALUE;
    private long unlogged;

    /** The failures not logged since the last line when one is due now, else -1. */
    synchronized long logNow(long now) {
      if (loggedAtMs != Long.MIN_VALUE && now - loggedAtMs < LOG_EVERY.toMillis()) {
        unlogged++;
        return -1;
      }
      long before = unlogged;
      loggedAtMs = now;
      unlogged = 0;
      return before;
    }

    synchronized boolean quietSince(long now) {
      return now - loggedAtMs >= LOG_EVERY.toMillis();
    }
  }
}
