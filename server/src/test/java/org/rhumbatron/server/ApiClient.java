package org.rhumbatron.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import javax.net.ssl.SSLContext;

/** A test's HTTP client of core's API: JSON in, status and JSON out. */
final class ApiClient {
  static final ObjectMapper JSON = new ObjectMapper();

  /** One answer: its status and body (null when the body is not JSON). */
  record Answer(int status, JsonNode body, String text) {
    String error() {
      return body == null ? text : body.path("error").asText(null);
    }
  }

  private final HttpClient http;
  private final String base;
  private final String token;

  ApiClient(String base, String token) {
    this(base, token, null);
  }

  /** A client of an HTTPS base that trusts what {@code tls} trusts (null: the system's store). */
  ApiClient(String base, String token, SSLContext tls) {
    this.base = base;
    this.token = token;
    HttpClient.Builder http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
    this.http = (tls == null ? http : http.sslContext(tls)).build();
  }

  static ApiClient of(CoreService core, String token) {
    return new ApiClient("http://127.0.0.1:" + core.httpPort(), token);
  }

  String base() {
    return base;
  }

  String token() {
    return token;
  }

  ApiClient withToken(String other) {
    return new ApiClient(base, other);
  }

  Answer get(String path) throws Exception {
    return send(HttpRequest.newBuilder(URI.create(base + path)).GET());
  }

  Answer post(String path, String body) throws Exception {
    return send(
        HttpRequest.newBuilder(URI.create(base + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body)));
  }

  Answer post(String path, Object body) throws Exception {
    return post(path, JSON.writeValueAsString(body));
  }

  Answer delete(String path) throws Exception {
    return send(HttpRequest.newBuilder(URI.create(base + path)).DELETE());
  }

  Answer send(HttpRequest.Builder request) throws Exception {
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    HttpResponse<String> response =
        http.send(
            request.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    JsonNode body;
    try {
      body = response.body().isEmpty() ? null : JSON.readTree(response.body());
    } catch (Exception e) {
      body = null;
    }
    return new Answer(response.statusCode(), body, response.body());
  }
}
