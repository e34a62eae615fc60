package org.rhumbatron.api;

import java.time.Clock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A token bucket per key (a credential, or an address for open reads): {@code limit} requests per
 * second, in bursts of one second's worth. Kept per core: a client spread over several cores gets
 * the limit of each.
 */
final class RateLimits {
  // Past this many keys, buckets that are full again are dropped: they would admit anyway.
  static final int MAX_KEYS = 10_000;

  private final Clock clock;
  private final Map<String, Bucket> buckets = new ConcurrentHashMap<>();

  RateLimits(Clock clock) {
    this.clock = clock;
  }

  /** 0 when a request of {@code key} may pass now, else the whole seconds to wait (at least 1). */
  long take(String key, int limit) {
    long now = clock.millis();
    if (buckets.size() > MAX_KEYS) {
      buckets.values().removeIf(b -> b.fullAt(now));
    }
    return buckets.computeIfAbsent(key, k -> new Bucket(limit, now)).take(limit, now);
  }

  /** How many keys have a bucket now. */
  int keys() {
    return buckets.size();
  }

  private static final class Bucket {
    private double tokens;
    private long atMs;
    private int limit;

    Bucket(int limit, long now) {
      this.tokens = limit;
      this.atMs = now;
      this.limit = limit;
    }

    synchronized long take(int limit, long now) {
      this.limit = limit;
      refill(now);
      if (tokens >= 1) {
        tokens -= 1;
        return 0;
      }
      return Math.max(1, (long) Math.ceil((1 - tokens) / limit));
    }

    synchronized boolean fullAt(long now) {
      refill(now);
      return tokens >= limit;
    }

    private void refill(long now) {
      if (now > atMs) {
        tokens = Math.min(limit, tokens + (now - atMs) * limit / 1000.0);
        atMs = now;
      }
    }
  }
}
