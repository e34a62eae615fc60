package org.rhumbatron.protocol;

import java.util.Locale;

/**
 * The event log's names: {@value #STREAM_COUNT} streams {@code EVENTS_00}..{@code EVENTS_07} on the
 * subjects {@code events.00}..{@code events.07}. One Project always maps to one stream, so its
 * Events stay in order.
 */
public final class EventStreams {

  /** Number of event streams. */
  public static final int STREAM_COUNT = 8;

  // Formatted once: the subject is looked up on every publish and the name on every fetch.
  private static final String[] NAMES = new String[STREAM_COUNT];
  private static final String[] SUBJECTS = new String[STREAM_COUNT];

  static {
    for (int i = 0; i < STREAM_COUNT; i++) {
      NAMES[i] = String.format(Locale.ROOT, "EVENTS_%02d", i);
      SUBJECTS[i] = String.format(Locale.ROOT, "events.%02d", i);
    }
  }

  private EventStreams() {}

  /** The stream of a Project: {@code fnv1a32(projectId) mod 8}. */
  public static int streamIndex(String projectId) {
    return Fnv1a.bucket(Check.required("/projectId", projectId), STREAM_COUNT);
  }

  /** {@code EVENTS_%02d}, e.g. {@code EVENTS_03}. */
  public static String streamName(int index) {
    return NAMES[checkIndex(index)];
  }

  /** {@code events.%02d}, e.g. {@code events.03}. */
  public static String streamSubject(int index) {
    return SUBJECTS[checkIndex(index)];
  }

  private static int checkIndex(int index) {
    if (index < 0 || index >= STREAM_COUNT) {
      throw new IllegalArgumentException(
          "stream index must be in 0.." + (STREAM_COUNT - 1) + ", got " + index);
    }
    return index;
  }
}
