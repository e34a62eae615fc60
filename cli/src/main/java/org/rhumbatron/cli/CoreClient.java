package org.rhumbatron.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import javax.net.ssl.SSLContext;

/** Calls one core's HTTP API and turns each kind of failure into its exit code. */
final class CoreClient {
  static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final int RETRIES_ON_503 = 3;
  private static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(10);

  private final String base;
  private final String token;
  private final HttpClient http;

  /**
   * @param tls the TLS context that trusts core's CA, or null: the system's trusted CAs
   */
  CoreClient(String base, String token, SSLContext tls) {
    this.base = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
    this.token = token;
    HttpClient.Builder http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
    this.http = (tls == null ? http : http.sslContext(tls)).build();
  }

  /** A 2xx answer: its JSON, and its text as the core sent it (what {@code --json} prints). */
  record Answer(JsonNode json, String text) {}

  Answer get(String path) {
    return send("GET", path, null);
  }

  Answer post(String path, Object body) {
    return send("POST", path, body);
  }

  Answer delete(String path) {
    return send("DELETE", path, null);
  }

  private Answer send(String method, String path, Object body) {
    HttpRequest.Builder request;
    try {
      request = HttpRequest.newBuilder(URI.create(base + path)).timeout(TIMEOUT);
    } catch (IllegalArgumentException e) {
      throw new CliException(CliException.USAGE, "bad --url " + base + ": " + e.getMessage());
    }
    HttpRequest.BodyPublisher publisher;
    try {
      publisher =
          body == null
              ? HttpRequest.BodyPublishers.noBody()
              : HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    request.method(method, publisher).header("Content-Type", "application/json");
    // Reads too: a core that listens beyond loopback wants a credential for them.
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    HttpResponse<String> response;
    try {
      response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
      // A 503 with Retry-After (a node stopping, NATS or the database away a moment) is retried;
      // a write it refused did nothing, and a create carries its clientRequestId.
      for (int retry = 0; retry < RETRIES_ON_503; retry++) {
        Duration wait = retryAfter(response);
        if (wait == null) {
          break;
        }
        Thread.sleep(wait.toMillis());
        response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
      }
    } catch (IOException e) {
      throw unreachable(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw unreachable(e);
    }
    return answer(method, path, response);
  }

  /** How long a 503 asks to wait (at most {@link #MAX_RETRY_AFTER}), or null: no retry. */
  static Duration retryAfter(HttpResponse<?> response) {
    if (response.statusCode() != 503) {
      return null;
    }
    String value = response.headers().firstValue("Retry-After").orElse(null);
    try {
      long seconds = value == null ? -1 : Long.parseLong(value.trim());
      return seconds < 0
          ? null
          : Duration.ofSeconds(Math.min(seconds, MAX_RETRY_AFTER.toSeconds()));
    } catch (NumberFormatException e) {
      return null; // an HTTP date: core sends seconds, so this is no core of ours to wait for
    }
  }

  private CliException unreachable(Exception e) {
    String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    if (e instanceof javax.net.ssl.SSLException) {
      why += " (TLS: pass --cacert with the PEM file of the CA that signed core's certificate)";
    }
    return new CliException(CliException.UNREACHABLE, "core unreachable at " + base + ": " + why);
  }

  private static Answer answer(String method, String path, HttpResponse<String> response) {
    int status = response.statusCode();
    JsonNode json;
    try {
      json = JSON.readTree(response.body());
    } catch (IOException e) {
      json = null;
    }
    if (json == null || json.isMissingNode()) {
      throw new CliException(
          CliException.SERVER_FAILED,
          method + " " + path + ": HTTP " + status + " with an answer that is not JSON");
    }
    if (status >= 500) {
      throw new CliException(
          CliException.SERVER_FAILED, "HTTP " + status + ": " + json.path("error").asText());
    }
    if (status >= 400) {
      String field = json.path("field").asText("");
      throw new CliException(
          CliException.API_REFUSED,
          "HTTP "
              + status
              + ": "
              + json.path("error").asText()
              + (field.isEmpty() ? "" : " (field " + field + ")"));
    }
    return new Answer(json, response.body());
  }
}
