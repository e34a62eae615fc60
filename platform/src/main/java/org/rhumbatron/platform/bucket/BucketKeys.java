package org.rhumbatron.platform.bucket;

/**
 * The rule for keys, the same for both stores so an archive moves between them: non-empty segments
 * separated by {@code /}, no leading {@code /} (absolute), no {@code .} or {@code ..} segment (a
 * key must never reach outside its bucket directory), no backslash or control character, at most
 * {@link #MAX_LENGTH} characters.
 */
public final class BucketKeys {
  public static final int MAX_LENGTH = 1024;

  private BucketKeys() {}

  /**
   * Returns {@code key} when it follows the rule.
   *
   * @throws BucketException naming the key and the rule it breaks
   */
  public static String check(String bucket, String key) {
    if (key == null || key.isEmpty()) {
      throw refused(bucket, key, "a key must not be empty");
    }
    if (key.length() > MAX_LENGTH) {
      throw refused(bucket, key, "a key has at most " + MAX_LENGTH + " characters");
    }
    if (key.startsWith("/")) {
      throw refused(bucket, key, "a key must be relative, not start with '/'");
    }
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (c == '\\' || Character.isISOControl(c)) {
        throw refused(bucket, key, "a key must not hold '\\' or control characters");
      }
    }
    for (String segment : key.split("/", -1)) {
      if (segment.isEmpty()) {
        throw refused(bucket, key, "a key must not have an empty segment ('//' or a trailing '/')");
      }
      if (segment.equals(".") || segment.equals("..")) {
        throw refused(bucket, key, "a key must not have a '.' or '..' segment");
      }
    }
    return key;
  }

  /** A bucket name: letters, digits, {@code -} and {@code _} (a directory name and a NATS name). */
  public static String checkBucketName(String bucket) {
    if (bucket == null || !bucket.matches("[A-Za-z0-9_-]{1,64}")) {
      throw new BucketException(
          "bucket name '" + bucket + "' must be 1 to 64 letters, digits, '-' or '_'");
    }
    return bucket;
  }

  /** A prefix for {@link Bucket#list}: empty, or a key prefix without a leading {@code /}. */
  public static String checkPrefix(String bucket, String prefix) {
    if (prefix == null) {
      throw refused(bucket, "null", "a list prefix must not be null (use \"\" for all)");
    }
    if (prefix.startsWith("/") || prefix.contains("..")) {
      throw refused(bucket, prefix, "a list prefix must be relative and hold no '..'");
    }
    return prefix;
  }

  private static BucketException refused(String bucket, String key, String rule) {
    return new BucketException("bucket " + bucket + " refuses key '" + key + "': " + rule);
  }
}
