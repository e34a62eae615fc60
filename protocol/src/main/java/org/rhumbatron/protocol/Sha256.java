package org.rhumbatron.protocol;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * SHA-256, as the stable ids, composition keys and rendezvous weights use it. One digest per
 * thread: looking the algorithm up for each id was a visible share of the CPU of every write.
 */
public final class Sha256 {
  private static final HexFormat HEX = HexFormat.of();
  private static final ThreadLocal<MessageDigest> DIGESTS =
      ThreadLocal.withInitial(Sha256::newDigest);

  private Sha256() {}

  /** The digest of {@code bytes}. */
  public static byte[] of(byte[] bytes) {
    return digest().digest(bytes);
  }

  /** The digest of {@code text} in UTF-8. */
  public static byte[] of(String text) {
    return of(text.getBytes(StandardCharsets.UTF_8));
  }

  /** The first {@code bytes} bytes of the digest of {@code text} (UTF-8), in lower-case hex. */
  public static String hex(String text, int bytes) {
    return HEX.formatHex(of(text), 0, bytes);
  }

  /** The whole digest of {@code text} (UTF-8), in lower-case hex. */
  public static String hex(String text) {
    return hex(text, 32);
  }

  /** This thread's digest, reset, for a caller that feeds it in parts and then digests. */
  public static MessageDigest digest() {
    MessageDigest d = DIGESTS.get();
    d.reset();
    return d;
  }

  private static MessageDigest newDigest() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java runtime must provide SHA-256", e);
    }
  }
}
