package org.rhumbatron.platform.eventlog;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.rhumbatron.protocol.Event;

/**
 * The last decoded Events of one stream, by stream sequence, so that the subscriptions that read
 * the same message one after the other (project-view-projector, then causal-router) decode and
 * validate it once. An entry is used only when the message's bytes are the ones decoded: a stream
 * that was deleted and made again reuses its sequences. Bounded; the oldest entry goes first.
 * Thread-safe. An envelope that did not decode is not kept, so it fails again on its own.
 */
final class DecodedEvents {
  private record Entry(byte[] data, Event event) {}

  private final Map<Long, Entry> entries;
  private long hits;

  DecodedEvents(int capacity) {
    this.entries =
        new LinkedHashMap<>(capacity * 2, 0.75f) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<Long, Entry> eldest) {
            return size() > capacity;
          }
        };
  }

  /** The Event decoded from exactly {@code data} at {@code streamSequence}, or null. */
  synchronized Event get(long streamSequence, byte[] data) {
    Entry e = entries.get(streamSequence);
    if (e == null || !Arrays.equals(e.data(), data)) {
      return null;
    }
    hits++;
    return e.event();
  }

  synchronized void put(long streamSequence, byte[] data, Event event) {
    entries.put(streamSequence, new Entry(data, event));
  }

  synchronized long hits() {
    return hits;
  }
}
