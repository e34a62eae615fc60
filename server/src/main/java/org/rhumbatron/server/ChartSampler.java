package org.rhumbatron.server;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.rhumbatron.api.ChartWindow;
import org.rhumbatron.platform.concurrent.DaemonThreads;
import org.rhumbatron.platform.eventlog.Subscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Samples the figures of {@code /metrics} into the dashboard's {@link ChartWindow}: counters as a
 * rate per second since the last sample, levels as they are. Series: {@code events.published},
 * {@code events.applied.<consumer>}, {@code commands.<queue>}, {@code lag.<consumer>} (summed over
 * the streams), {@code outbox.backlog}, {@code deadLetters.open} and {@code archive.lagSeconds}
 * (the archiver's oldest unread Event); null where core could not read the figure.
 */
final class ChartSampler implements AutoCloseable {
  /** How often: the metrics cache their database and NATS reads as long. */
  static final java.time.Duration EVERY = CoreMetrics.REFRESH_EVERY;

  private static final Logger log = LoggerFactory.getLogger(ChartSampler.class);

  private final MeterRegistry registry;
  private final ChartWindow window;
  private final Clock clock;
  private final Map<String, Double> lastCounts = new HashMap<>();
  private ScheduledExecutorService timer;
  private Instant lastAt;

  ChartSampler(MeterRegistry registry, ChartWindow window, Clock clock) {
    this.registry = registry;
    this.window = window;
    this.clock = clock;
  }

  /** Samples every {@link ChartWindow#every()} on a thread of its own until closed. */
  ChartSampler start() {
    timer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("chart-sampler"));
    long every = window.every().toMillis();
    timer.scheduleWithFixedDelay(this::sampleQuietly, every, every, TimeUnit.MILLISECONDS);
    return this;
  }

  private void sampleQuietly() {
    try {
      sample();
    } catch (RuntimeException e) {
      log.warn("charts: cannot sample the metrics: {}", e.toString());
    }
  }

  /** Reads the meters once and adds the sample to the window. */
  synchronized ChartWindow.Sample sample() {
    Instant now = clock.instant();
    double seconds = lastAt == null ? 0 : (now.toEpochMilli() - lastAt.toEpochMilli()) / 1000.0;
    Map<String, Double> values = new LinkedHashMap<>();
    values.put(
        "events.published",
        rate("events.published", total("rhumbatron.events.published", null, null), seconds));
    for (Subscription s : Subscription.values()) {
      String name = s.durableName();
      double applied = total("rhumbatron.events.applied", "consumer", name);
      values.put("events.applied." + name, rate("applied." + name, applied, seconds));
    }
    for (FunctionCounter c : registry.find("rhumbatron.queue.handled").functionCounters()) {
      String queue = c.getId().getTag("queue");
      values.put("commands." + queue, rate("commands." + queue, c.count(), seconds));
    }
    Map<String, Double> lags = new LinkedHashMap<>();
    for (Gauge g : registry.find("rhumbatron.consumer.lag").gauges()) {
      lags.merge("lag." + g.getId().getTag("consumer"), g.value(), ChartSampler::sum);
    }
    lags.forEach((k, v) -> values.put(k, known(v)));
    values.put("outbox.backlog", known(gaugeSum("rhumbatron.outbox.backlog")));
    values.put("deadLetters.open", known(gaugeSum("rhumbatron.dead.letters.open")));
    double archive = Double.NaN;
    for (Gauge g : registry.find("rhumbatron.consumer.oldest.unread.age").gauges()) {
      if (Subscription.AUDIT_ARCHIVER.durableName().equals(g.getId().getTag("consumer"))) {
        archive = Double.isNaN(archive) ? g.value() : Math.max(archive, g.value());
      }
    }
    values.put("archive.lagSeconds", known(archive));
    lastAt = now;
    return window.add(values);
  }

  /** The rate of {@code count} per second since the last sample; null on the first one. */
  private Double rate(String key, double count, double seconds) {
    Double before = lastCounts.put(key, count);
    if (before == null || seconds <= 0 || Double.isNaN(count) || Double.isNaN(before)) {
      return null;
    }
    return Math.max(0, count - before) / seconds;
  }

  private double total(String name, String tag, String value) {
    var search = registry.find(name);
    if (tag != null) {
      search = search.tag(tag, value);
    }
    double sum = Double.NaN;
    for (FunctionCounter c : search.functionCounters()) {
      sum = sum(sum, c.count());
    }
    return sum;
  }

  private double gaugeSum(String name) {
    double sum = Double.NaN;
    for (Gauge g : registry.find(name).gauges()) {
      sum = sum(sum, g.value());
    }
    return sum;
  }

  /** A sum over what could be read: NaN only when nothing could. */
  private static double sum(double a, double b) {
    if (Double.isNaN(a)) {
      return b;
    }
    return Double.isNaN(b) ? a : a + b;
  }

  private static Double known(double v) {
    return Double.isNaN(v) ? null : v;
  }

  @Override
  public void close() {
    if (timer != null) {
      timer.shutdownNow();
    }
  }
}
