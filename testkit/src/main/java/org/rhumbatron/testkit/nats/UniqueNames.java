package org.rhumbatron.testkit.nats;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Names for streams, consumers, buckets and subjects that no other test uses, so tests can share
 * one server. Each name is a prefix from the test's name plus a counter that is unique in the JVM,
 * restricted to {@code A-Z a-z 0-9 _ -} (valid for streams, consumers and KV/object buckets).
 */
public final class UniqueNames {
  private static final AtomicLong counter = new AtomicLong();
  private static final int MAX_PREFIX = 32;

  private final String prefix;

  private UniqueNames(String prefix) {
    this.prefix = prefix;
  }

  public static UniqueNames forPrefix(String testName) {
    String cleaned = testName.replaceAll("[^A-Za-z0-9_-]", "_");
    if (cleaned.isEmpty()) {
      cleaned = "test";
    }
    return new UniqueNames(cleaned.substring(0, Math.min(cleaned.length(), MAX_PREFIX)));
  }

  public String prefix() {
    return prefix;
  }

  /** {@code <prefix>_<kind>_<n>}; every call gives a new name. */
  public String name(String kind) {
    return prefix + "_" + kind + "_" + counter.incrementAndGet();
  }

  public String stream() {
    return name("S");
  }

  public String consumer() {
    return name("C");
  }

  public String bucket() {
    return name("B");
  }

  /** A subject of two tokens, {@code <prefix>.<n>}. */
  public String subject() {
    return prefix + "." + counter.incrementAndGet();
  }
}
