package org.rhumbatron.platform.cluster;

import java.nio.ByteBuffer;
import java.util.Collection;
import org.rhumbatron.protocol.Sha256;

/**
 * Rendezvous (highest random weight) hashing: a duty goes to the live node with the highest weight
 * for the pair, so a node that leaves moves only its own duties and one that joins takes about its
 * share from each of the others.
 */
public final class Rendezvous {
  private Rendezvous() {}

  /** The node among {@code liveNodes} that should hold {@code duty}; null when there is none. */
  public static String owner(Duty duty, Collection<String> liveNodes) {
    String best = null;
    long bestWeight = 0;
    for (String node : liveNodes) {
      long w = weight(duty, node);
      if (best == null
          || Long.compareUnsigned(w, bestWeight) > 0
          || (w == bestWeight && node.compareTo(best) < 0)) {
        best = node;
        bestWeight = w;
      }
    }
    return best;
  }

  /** The first 8 bytes of SHA-256 of {@code duty/node}: spread well, the same in every JVM. */
  static long weight(Duty duty, String node) {
    byte[] digest = Sha256.of(duty.key() + "/" + node);
    return ByteBuffer.wrap(digest, 0, Long.BYTES).getLong();
  }
}
