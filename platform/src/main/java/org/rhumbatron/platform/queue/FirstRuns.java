package org.rhumbatron.platform.queue;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The stream sequences whose first delivery (the server's count 1) ran a handler of this consumer
 * and that are not settled for good. nats-server before 2.10.14 can hand out a redelivery that no
 * pull request could take as a first delivery again: a second "first" of a sequence seen here is
 * such a redelivery, and must count as one. Bounded: the oldest are forgotten first.
 */
final class FirstRuns {
  static final int CAPACITY = 10_000;

  private final Map<Long, Boolean> seen =
      new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
          return size() > CAPACITY;
        }
      };

  /** Records a first delivery of {@code streamSequence}; false when one was recorded already. */
  synchronized boolean first(long streamSequence) {
    return seen.put(streamSequence, Boolean.TRUE) == null;
  }

  /** The message is acked or terminated: it comes back no more. */
  synchronized void forget(long streamSequence) {
    seen.remove(streamSequence);
  }
}
