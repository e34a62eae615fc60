package org.rhumbatron.protocol;

import java.nio.charset.StandardCharsets;

/**
 * FNV-1a, 32 bits, over UTF-8: the hash behind the stream of a Project and the shard of a resource
 * key. It must match the seed's {@code fnv1a32} bit for bit, or a Project would change streams.
 */
public final class Fnv1a {

  /** 2166136261 as a Java int. */
  public static final int OFFSET_BASIS = 0x811c9dc5;

  /** 16777619. */
  public static final int PRIME = 0x01000193;

  private Fnv1a() {}

  /**
   * The FNV-1a hash of {@code text}'s UTF-8 bytes. The result is an unsigned 32-bit value held in
   * an int: read it with {@link Integer#toUnsignedLong} or {@link Integer#remainderUnsigned}, never
   * with {@code %}.
   */
  public static int fnv1a32(String text) {
    Check.required("text", text);
    int hash = OFFSET_BASIS;
    for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
      hash ^= b & 0xff;
      hash *= PRIME; // int overflow is the mod 2^32 that FNV wants
    }
    return hash;
  }

  /** {@code fnv1a32(key) mod buckets}, unsigned; e.g. the shard of a resource key. */
  public static int bucket(String key, int buckets) {
    if (buckets < 1) {
      throw new IllegalArgumentException("buckets must be at least 1, got " + buckets);
    }
    return Integer.remainderUnsigned(fnv1a32(key), buckets);
  }
}
