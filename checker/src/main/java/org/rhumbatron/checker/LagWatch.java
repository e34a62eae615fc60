package org.rhumbatron.checker;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Scrapes core's {@code /metrics} through a run and keeps, per consumer, the largest age of the
 * oldest unread Event of any stream: the lag figure of the archiver and the analytics. A scrape
 * that fails (core killed, NATS away) is skipped; with several cores, each is scraped.
 */
final class LagWatch implements AutoCloseable {
  static final String METRIC = "rhumbatron_consumer_oldest_unread_age_seconds";
  static final String TOTAL = "max_oldest_unread_age_s.";

  /** Often enough to see a lag of the 2-minute bound; a scrape is one local request. */
  static final Duration EVERY = Duration.ofSeconds(5);

  private static final Pattern LINE =
      Pattern.compile("^" + METRIC + "\\{([^}]*)\\} (\\S+)$", Pattern.MULTILINE);
  private static final Pattern CONSUMER = Pattern.compile("consumer=\"([^\"]*)\"");

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final Supplier<List<String>> apiUrls;
  private final Map<String, Double> max = new TreeMap<>();
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "check-lag-watch");
            t.setDaemon(true);
            return t;
          });

  LagWatch(String apiUrl) {
    this(() -> List.of(apiUrl));
  }

  /** Scrapes every core of {@code apiUrls} that runs; each reports the streams it reads. */
  LagWatch(Supplier<List<String>> apiUrls) {
    this.apiUrls = apiUrls;
  }

  LagWatch start() {
    timer.scheduleWithFixedDelay(this::scrape, 0, EVERY.toMillis(), TimeUnit.MILLISECONDS);
    return this;
  }

  private void scrape() {
    for (String url : apiUrls.get()) {
      String body;
      try {
        body =
            http.send(
                    HttpRequest.newBuilder(URI.create(url + "/metrics"))
                        .timeout(Duration.ofSeconds(3))
                        .build(),
                    HttpResponse.BodyHandlers.ofString())
                .body();
      } catch (Exception down) {
        continue;
      }
      record(body);
    }
  }

  /** Folds one exposition into the maxima. */
  synchronized void record(String exposition) {
    Matcher m = LINE.matcher(exposition);
    while (m.find()) {
      Matcher c = CONSUMER.matcher(m.group(1));
      double v;
      try {
        v = Double.parseDouble(m.group(2));
      } catch (NumberFormatException e) {
        continue;
      }
      if (c.find() && !Double.isNaN(v)) {
        max.merge(c.group(1), v, Math::max);
      }
    }
  }

  /** Adds each consumer's largest age, in whole seconds, to {@code report}'s totals. */
  synchronized void report(CheckReport report) {
    max.forEach((consumer, age) -> report.total(TOTAL + consumer, (long) Math.ceil(age)));
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
