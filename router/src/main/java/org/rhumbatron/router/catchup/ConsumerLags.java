package org.rhumbatron.router.catchup;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.eventlog.EventLogClient.Backlog;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.EventStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last sampled {@link Backlog} of each stream's consumers, the age of their oldest unread Event
 * (for /metrics and the dashboard), whether a stream is behind enough for core to read more of it,
 * and a WARN, at most once per {@code router.behind-warn-every} per stream, while an unread Event
 * is older than {@code router.behind-warn}: the stream drops it at {@code events.max-age}, and the
 * audit archive would never hold it.
 */
public final class ConsumerLags {
  private static final Logger log = LoggerFactory.getLogger(ConsumerLags.class);

  /** The consumers core reads beside the nudges; the rest of {@code Subscription} are nudged. */
  public static final Subscription[] CAUGHT_UP = {
    Subscription.AUDIT_ARCHIVER, Subscription.ANALYTICS_PROJECTOR
  };

  private final Clock clock;
  private final int fullBatch;
  private final Duration catchUpAfter;
  private final Duration warnAfter;
  private final Duration warnEvery;
  private final Duration streamKeeps;
  private final AtomicReference<Map<Subscription, Backlog>>[] samples;
  private final Instant[] warnedAt = new Instant[EventStreams.STREAM_COUNT];

  @SuppressWarnings("unchecked")
  public ConsumerLags(Clock clock, Settings settings) {
    this.clock = clock;
    this.fullBatch = settings.get(Settings.ROUTER_FETCH_BATCH);
    this.catchUpAfter = settings.get(Settings.ROUTER_CATCH_UP_AFTER);
    this.warnAfter = settings.get(Settings.ROUTER_BEHIND_WARN);
    this.warnEvery = settings.get(Settings.ROUTER_BEHIND_WARN_EVERY);
    this.streamKeeps = settings.get(Settings.EVENT_STREAM_MAX_AGE);
    this.samples = new AtomicReference[EventStreams.STREAM_COUNT];
    for (int i = 0; i < samples.length; i++) {
      samples[i] = new AtomicReference<>();
    }
  }

  /**
   * Keeps {@code backlogs} as the stream's latest sample and warns when an unread Event of it is
   * older than {@code router.behind-warn}. Returns whether the archiver or the analytics is behind
   * enough to read more now: a full batch unread, or its oldest unread Event at least {@code
   * router.catch-up-after} old (a quiet stream's few Events then still go within that bound, and a
   * busy one's archive objects stay full batches).
   */
  public boolean record(int streamIndex, Map<Subscription, Backlog> backlogs) {
    samples[streamIndex].set(new EnumMap<>(backlogs));
    Instant now = clock.instant();
    warnIfOld(streamIndex, backlogs, now);
    for (Subscription s : CAUGHT_UP) {
      Backlog b = backlogs.get(s);
      if (b != null
          && b.unread() > 0
          && (b.unread() >= fullBatch || !age(b, now).minus(catchUpAfter).isNegative())) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether a nudged consumer (projector, causal router) of the stream's last sample has an Event
   * unread for {@code router.catch-up-after}: nudges read within milliseconds, so such an Event
   * waits for a delivery nothing asks for (an ack lost with a connection comes back after the ack
   * wait, and without a publish the next fetch is the stream's sweep, up to 8 minutes on).
   */
  public boolean nudgedBehind(int streamIndex) {
    Map<Subscription, Backlog> sample = samples[streamIndex].get();
    if (sample == null) {
      return false;
    }
    Instant now = clock.instant();
    for (Map.Entry<Subscription, Backlog> e : sample.entrySet()) {
      if (!List.of(CAUGHT_UP).contains(e.getKey())
          && e.getValue().unread() > 0
          && !age(e.getValue(), now).minus(catchUpAfter).isNegative()) {
        return true;
      }
    }
    return false;
  }

  /**
   * Seconds since the oldest Event {@code subscription} has not read was stored on the stream, as
   * of now (0 when it has read everything), or NaN before the stream's first sample.
   */
  public double oldestUnreadAgeSeconds(int streamIndex, Subscription subscription) {
    Map<Subscription, Backlog> sample = samples[streamIndex].get();
    if (sample == null || !sample.containsKey(subscription)) {
      return Double.NaN;
    }
    return age(sample.get(subscription), clock.instant()).toMillis() / 1000.0;
  }

  /** Records unread in the last sample, or -1 before the stream's first sample. */
  public long unread(int streamIndex, Subscription subscription) {
    Map<Subscription, Backlog> sample = samples[streamIndex].get();
    Backlog b = sample == null ? null : sample.get(subscription);
    return b == null ? -1 : b.unread();
  }

  private void warnIfOld(int streamIndex, Map<Subscription, Backlog> backlogs, Instant now) {
    Subscription oldest = null;
    Duration oldestAge = Duration.ZERO;
    for (Map.Entry<Subscription, Backlog> e : backlogs.entrySet()) {
      Duration a = age(e.getValue(), now);
      if (a.compareTo(oldestAge) > 0) {
        oldest = e.getKey();
        oldestAge = a;
      }
    }
    if (oldest == null || oldestAge.compareTo(warnAfter) <= 0) {
      return;
    }
    synchronized (warnedAt) {
      Instant last = warnedAt[streamIndex];
      if (last != null && Duration.between(last, now).compareTo(warnEvery) < 0) {
        return;
      }
      warnedAt[streamIndex] = now;
    }
    log.warn(
        "{} of {} is behind: its oldest unread Event is {} s old ({} unread), past"
            + " router.behind-warn ({} s); the stream drops Events after {} s",
        oldest.durableName(),
        EventStreams.streamName(streamIndex),
        oldestAge.toSeconds(),
        backlogs.get(oldest).unread(),
        warnAfter.toSeconds(),
        streamKeeps.toSeconds());
  }

  private static Duration age(Backlog b, Instant now) {
    if (b.unread() == 0 || b.oldestUnreadAt() == null) {
      return Duration.ZERO;
    }
    Duration a = Duration.between(b.oldestUnreadAt(), now);
    return a.isNegative() ? Duration.ZERO : a;
  }
}
