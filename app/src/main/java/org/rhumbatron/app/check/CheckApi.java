package org.rhumbatron.app.check;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;

/**
 * The workload's way into core: its HTTP API, as an outside client would use it. A request that
 * finds core down (killed by a fault, or answering 503 while NATS or the database is away) is sent
 * again, unchanged, until core answers; so a create is repeated with its client request id.
 */
final class CheckApi {
  record Answer(int status, JsonNode body) {}

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final long RETRY_MILLIS = 500;

  private final String url;
  private final String token;
  private final Clock clock;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  CheckApi(String url, String token, Clock clock) {
    this.url = url;
    this.token = token;
    this.clock = clock;
  }

  Answer get(String path, Duration within) throws InterruptedException {
    return send(HttpRequest.newBuilder(URI.create(url + path)).GET(), within);
  }

  Answer post(String path, JsonNode body, Duration within) throws InterruptedException {
    return send(
        HttpRequest.newBuilder(URI.create(url + path))
            .header("Content-Type", "application/json")
            .header("Authorization", "Bearer " + token)
            .POST(HttpRequest.BodyPublishers.ofString(body.toString())),
        within);
  }

  /** Sends until an answer below 500 comes, or {@code within} passed (then the last failure). */
  private Answer send(HttpRequest.Builder request, Duration within) throws InterruptedException {
    long deadline = clock.millis() + within.toMillis();
    HttpRequest built = request.timeout(TIMEOUT).build();
    while (true) {
      String failure;
      try {
        HttpResponse<String> r = http.send(built, HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() < 500) {
          return new Answer(r.statusCode(), JSON.readTree(r.body().isEmpty() ? "{}" : r.body()));
        }
        failure = r.statusCode() + " " + r.body();
      } catch (IOException e) {
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
}
