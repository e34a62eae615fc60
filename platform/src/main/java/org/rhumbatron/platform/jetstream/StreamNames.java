package org.rhumbatron.platform.jetstream;

import java.util.List;

/**
 * Stream names and subjects of the seed. A stand-in until the protocol module's {@code Queue} and
 * stream helpers exist; then these should delegate to (or be replaced by) them.
 */
final class StreamNames {
  static final int EVENT_STREAM_COUNT = 8;
  static final String COMMANDS = "COMMANDS";

  /** The six queues, each one subject {@code cmd.<queue>} on {@link #COMMANDS}. */
  static final List<String> QUEUES =
      List.of("agent-wakeups", "integration", "verification", "release", "indexing", "dead-letter");

  private StreamNames() {}

  static String eventStream(int index) {
    return String.format("EVENTS_%02d", checkIndex(index));
  }

  static String eventSubject(int index) {
    return String.format("events.%02d", checkIndex(index));
  }

  static String commandSubject(String queue) {
    return "cmd." + queue;
  }

  private static int checkIndex(int index) {
    if (index < 0 || index >= EVENT_STREAM_COUNT) {
      throw new IllegalArgumentException(
          "stream index " + index + " is outside 0.." + (EVENT_STREAM_COUNT - 1));
    }
    return index;
  }
}
