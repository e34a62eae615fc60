package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * Walks the OpenAPI file's paths with every method: a documented one is routed (never 404 "no
 * route" nor 405), any other is 405 with {@code Allow} naming the documented methods, as
 * docs/api.md says.
 */
class ApiMethodsTest {
  static final String TOKEN = "methods-token-1";
  static final List<String> METHODS = List.of("GET", "POST", "PUT", "PATCH", "DELETE");
  static final ObjectMapper JSON = new ObjectMapper();

  @RegisterExtension static final NatsServerExtension nats = new NatsServerExtension();
  @RegisterExtension static final DatabaseExtension db = DatabaseExtension.sqlite();
  @TempDir static Path data;

  static CoreService core;
  static final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeAll
  static void startCore() throws Exception {
    core = TestCores.withToken(nats.url(), data, db.database().url(), TOKEN);
  }

  @AfterAll
  static void stopCore() {
    if (core != null) {
      core.close();
    }
  }

  static HttpResponse<String> send(String method, String path) throws Exception {
    HttpRequest.BodyPublisher body =
        method.equals("GET")
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString("{}");
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + core.httpPort() + path))
            .timeout(Duration.ofSeconds(30))
            .header("Authorization", "Bearer " + TOKEN)
            .header("Content-Type", "application/json")
            .method(method, body)
            .build();
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }

  /** A path of the file with its parameters filled in: ids no row holds. */
  static String concrete(String template) {
    return template.replace("{asset}", "app.js").replaceAll("\\{[^}]+}", "x-none");
  }

  @Test
  void everyDocumentedPathAnswersOtherMethodsWith405AndAllow() throws Exception {
    HttpResponse<String> file = send("GET", "/openapi.json");
    JsonNode paths = JSON.readTree(file.body()).path("paths");
    assertThat(paths.size()).isGreaterThan(20);
    for (Iterator<Map.Entry<String, JsonNode>> it = paths.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> entry = it.next();
      Set<String> documented = new TreeSet<>();
      entry
          .getValue()
          .fieldNames()
          .forEachRemaining(m -> documented.add(m.toUpperCase(Locale.ROOT)));
      documented.retainAll(METHODS);
      String path = concrete(entry.getKey());
      for (String method : METHODS) {
        HttpResponse<String> r = send(method, path);
        String what = method + " " + path + " -> " + r.statusCode() + " " + r.body();
        if (documented.contains(method)) {
          assertThat(r.statusCode()).as(what).isNotEqualTo(405);
          assertThat(r.body()).as(what).doesNotContain("no route");
          JsonNode responses =
              entry.getValue().path(method.toLowerCase(Locale.ROOT)).path("responses");
          assertThat(responses.has(Integer.toString(r.statusCode())))
              .as(what + ": a status openapi.json does not list for it")
              .isTrue();
        } else {
          assertThat(r.statusCode()).as(what).isEqualTo(405);
          String allow = r.headers().firstValue("Allow").orElse("");
          Set<String> allowed =
              Arrays.stream(allow.split(","))
                  .map(String::strip)
                  .filter(s -> !s.isEmpty())
                  .collect(Collectors.toCollection(TreeSet::new));
          assertThat(allowed).as(what + " Allow: " + allow).isEqualTo(documented);
          assertThat(JSON.readTree(r.body()).path("error").asText())
              .as(what)
              .startsWith("method " + method + " not allowed on " + path);
        }
      }
    }
  }

  @Test
  void everyErrorStatusOfTheOpenApiFileIsExplainedInDocsApiMd() throws Exception {
    JsonNode paths = JSON.readTree(send("GET", "/openapi.json").body()).path("paths");
    Set<String> listed = new TreeSet<>();
    paths.forEach(
        path ->
            path.forEach(
                operation ->
                    operation.path("responses").fieldNames().forEachRemaining(listed::add)));
    listed.removeIf(status -> status.startsWith("2"));
    // docs/api.md's table of statuses: rows "| 401 / 403 | ...".
    Set<String> explained = new TreeSet<>();
    for (String line : Files.readAllLines(Path.of("..", "docs", "api.md"))) {
      Matcher row = Pattern.compile("^\\| ([0-9 /]+) \\|").matcher(line);
      if (row.find()) {
        explained.addAll(Arrays.asList(row.group(1).split("\\s*/\\s*")));
      }
    }
    assertThat(explained).as("statuses explained in docs/api.md").containsAll(listed);
  }

  @Test
  void anUnknownPathIsStill404NoRoute() throws Exception {
    HttpResponse<String> r = send("PUT", "/api/nothing-here");
    assertThat(r.statusCode()).isEqualTo(404);
    assertThat(JSON.readTree(r.body()).path("error").asText())
        .isEqualTo("no route PUT /api/nothing-here");
  }
}
