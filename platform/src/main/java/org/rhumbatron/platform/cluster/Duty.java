package org.rhumbatron.platform.cluster;

import org.rhumbatron.protocol.EventStreams;

/**
 * The fixed units of single-writer work. A stream's duty is its outbox publishing, its router runs
 * (and the minute tick's runs when it sweeps that stream) and the alarms of the actors of its
 * projects; {@link #SWEEP} is the rest that must run once: the maintenance and retention ticks, the
 * outbox purge, the archive expiry and the Workflow resumption.
 */
public enum Duty {
  STREAM_00,
  STREAM_01,
  STREAM_02,
  STREAM_03,
  STREAM_04,
  STREAM_05,
  STREAM_06,
  STREAM_07,
  SWEEP;

  static {
    if (EventStreams.STREAM_COUNT != 8) {
      throw new ExceptionInInitializerError("one stream duty per event stream: 8 expected");
    }
  }

  /** The duty of event stream {@code streamIndex}. */
  public static Duty stream(int streamIndex) {
    if (streamIndex < 0 || streamIndex >= EventStreams.STREAM_COUNT) {
      throw new IllegalArgumentException(
          "stream index must be 0.." + (EventStreams.STREAM_COUNT - 1) + ", was " + streamIndex);
    }
    return values()[streamIndex];
  }

  /** The duty of the stream that carries {@code projectId}'s Events. */
  public static Duty ofProject(String projectId) {
    return stream(EventStreams.streamIndex(projectId));
  }

  /** Its name in {@code cluster_leases.duty} and in the API: {@code stream-00}, {@code sweep}. */
  public String key() {
    return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
  }

  /** The duty named {@code key} ({@link #key}). */
  public static Duty ofKey(String key) {
    for (Duty d : values()) {
      if (d.key().equals(key)) {
        return d;
      }
    }
    throw new IllegalArgumentException("no duty named '" + key + "'");
  }

  public boolean isStream() {
    return this != SWEEP;
  }

  /** The stream index of a stream duty. */
  public int streamIndex() {
    if (!isStream()) {
      throw new IllegalStateException(key() + " is not a stream duty");
    }
    return ordinal();
  }
}
