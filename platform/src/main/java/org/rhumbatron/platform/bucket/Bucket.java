package org.rhumbatron.platform.bucket;

import java.util.List;
import java.util.Optional;

/**
 * A store of whole objects under {@code /}-separated keys (see {@link BucketKeys}). A put replaces
 * the object under its key in one step: a reader sees the old bytes or the new ones, never a part.
 * Every failure of the store is a {@link BucketException} that names the bucket and the key.
 */
public interface Bucket {

  /** The evidence bucket of the seed: the audit archive lives under {@code events/} in it. */
  String EVIDENCE = "rhumbatron-evidence";

  String name();

  /** Stores {@code bytes} under {@code key}, replacing any object there; the upload time is now. */
  void put(String key, byte[] bytes);

  /** The object's bytes, or empty when there is no object under {@code key}. */
  Optional<byte[]> get(String key);

  /** The objects whose key starts with {@code prefix} ({@code ""}: all), ordered by key. */
  List<BucketObject> list(String prefix);

  /** Deletes the object under {@code key}; false when there was none. */
  boolean delete(String key);
}
