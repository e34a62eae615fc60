package org.rhumbatron.workload;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;

/**
 * The demo's reads of a live core's HTTP API, as an operator would make them: what the failover
 * watch and the stall report say comes from the answers the API gives anyone.
 */
final class DemoApi {
  static final Duration TIMEOUT = Duration.ofSeconds(10);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String base;
  private final String token;
  private final HttpClient http;

  /**
   * {@code base} like {@code http://127.0.0.1:8080}; {@code token} the API's bearer token; {@code
   * tls} what an {@code https} base is trusted by (null: the system's trusted CAs).
   */
  DemoApi(String base, String token, SSLContext tls) {
    this.base = base;
    this.token = token;
    HttpClient.Builder http =
        HttpClient.newBuilder().connectTimeout(TIMEOUT).version(HttpClient.Version.HTTP_1_1);
    this.http = (tls == null ? http : http.sslContext(tls)).build();
  }

  /**
   * Checks that core answers at {@code base}, as the dashboard's reader would reach it; the error
   * says what to give when its certificate is not trusted.
   */
  void checkReachable() {
    try {
      get("/healthz");
    } catch (SSLException e) {
      throw new IllegalStateException(
          base
              + " answers with a certificate this demo does not trust ("
              + e.getMessage()
              + "): give the CA that signed http.tls.cert with --cacert FILE");
    } catch (IOException e) {
      throw new IllegalStateException(base + " does not answer: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reaching " + base);
    }
  }

  JsonNode cluster() throws IOException, InterruptedException {
    return get("/api/cluster");
  }

  JsonNode streams() throws IOException, InterruptedException {
    return get("/api/streams");
  }

  JsonNode changes(String projectId) throws IOException, InterruptedException {
    return get("/api/projects/" + encode(projectId) + "/changes?limit=1000");
  }

  /** The Change with its Tasks. */
  JsonNode change(String changeId) throws IOException, InterruptedException {
    return get("/api/changes/" + encode(changeId));
  }

  JsonNode events(String changeId) throws IOException, InterruptedException {
    return get("/api/changes/" + encode(changeId) + "/events");
  }

  /** The open dead letters of one Change. */
  JsonNode deadLetters(String changeId) throws IOException, InterruptedException {
    return get("/api/dead-letters?changeId=" + encode(changeId));
  }

  private JsonNode get(String path) throws IOException, InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(TIMEOUT)
            .header("Authorization", "Bearer " + token)
            .GET()
            .build();
    HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IOException(
          "GET " + path + " answered " + response.statusCode() + ": " + response.body());
    }
    return JSON.readTree(response.body());
  }

  private static String encode(String id) {
    return URLEncoder.encode(id, StandardCharsets.UTF_8);
  }
}
