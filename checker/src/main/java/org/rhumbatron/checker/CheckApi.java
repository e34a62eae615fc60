package org.rhumbatron.checker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The workload's way into core: its HTTP API, as an outside client behind a load balancer would use
 * it. Each request goes to the next core that runs (round robin); one that finds core down (killed
 * by a fault, or answering 503 while NATS or the database is away) is sent again, unchanged, to the
 * next, until a core answers; so a create is repeated with its client request id.
 */
final class CheckApi {
  record Answer(int status, JsonNode body) {}

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final long RETRY_MILLIS = 500;

  private final Supplier<List<String>> urls;
  private final String token;
  private final Clock clock;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final AtomicLong next = new AtomicLong();
  private final AtomicLong unavailable = new AtomicLong();
  private final AtomicLong unavailableWithoutRetryAfter = new AtomicLong();
  private final AtomicLong otherServerErrors = new AtomicLong();
  private final AtomicLong unreachable = new AtomicLong();

  CheckApi(String url, String token, Clock clock) {
    this(() -> List.of(url), token, clock);
  }

  /** {@code urls}: the cores that run now, as a load balancer's health checks would see them. */
  CheckApi(Supplier<List<String>> urls, String token, Clock clock) {
    this.urls = urls;
    this.token = token;
    this.clock = clock;
  }

  Answer get(String path, Duration within) throws InterruptedException {
    return send(url -> HttpRequest.newBuilder(URI.create(url + path)).GET(), within);
  }

  Answer post(String path, JsonNode body, Duration within) throws InterruptedException {
    return send(
        url ->
            HttpRequest.newBuilder(URI.create(url + path))
                .header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + token)
                .POST(HttpRequest.BodyPublishers.ofString(body.toString())),
        within);
  }

  /** What the clients were answered besides success: the check's report lists them. */
  void report(CheckReport report) {
    report.total("api_answered_503", unavailable.get());
    report.total("api_answered_503_without_retry_after", unavailableWithoutRetryAfter.get());
    report.total("api_answered_other_5xx", otherServerErrors.get());
    report.total("api_unreachable", unreachable.get());
  }

  /** Sends until an answer below 500 comes, or {@code within} passed (then the last failure). */
  private Answer send(Function<String, HttpRequest.Builder> request, Duration within)
      throws InterruptedException {
    long deadline = clock.millis() + within.toMillis();
    while (true) {
      String failure;
      HttpRequest built = request.apply(pick()).timeout(TIMEOUT).build();
      try {
        HttpResponse<String> r = http.send(built, HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() < 500) {
          return new Answer(r.statusCode(), JSON.readTree(r.body().isEmpty() ? "{}" : r.body()));
        }
        count(r);
        failure = r.statusCode() + " " + r.body();
      } catch (IOException e) {
        unreachable.incrementAndGet();
        failure = e.toString();
      }
      if (clock.millis() > deadline) {
        throw new IllegalStateException(
            built.method()
                + " "
                + built.uri()
                + " got no answer within "
                + within
                + ": "
                + failure);
      }
      Thread.sleep(RETRY_MILLIS);
    }
  }

  private void count(HttpResponse<String> r) {
    if (r.statusCode() != 503) {
      otherServerErrors.incrementAndGet();
    } else if (r.headers().firstValue("Retry-After").isPresent()) {
      unavailable.incrementAndGet();
    } else {
      unavailableWithoutRetryAfter.incrementAndGet();
    }
  }

  /**
   * The next core that runs; when none does, the next of all (the request fails and is retried).
   */
  private String pick() {
    List<String> live = urls.get();
    if (live.isEmpty()) {
      throw new IllegalStateException("no core address to send to");
    }
    return live.get((int) Math.floorMod(next.getAndIncrement(), (long) live.size()));
  }
}
