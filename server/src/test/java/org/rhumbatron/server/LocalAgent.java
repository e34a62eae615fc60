package org.rhumbatron.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.rhumbatron.server.ApiClient.Answer;

/**
 * An Agent's webhook endpoint on a free loopback port, for the tests of the webhook runtime: core
 * POSTs each wake to {@link #url()} and the test's handler says what the Agent does with it. What a
 * wake leads to runs on the Agent's own threads ({@link #submit}), after the wake was answered, as
 * a real Agent reports after it took the work.
 */
final class LocalAgent implements AutoCloseable {
  /** What the Agent does with one wake; it answers the exchange. */
  interface Handler {
    void wake(HttpExchange exchange) throws IOException;
  }

  /** A step that calls the API. */
  interface Step {
    void run() throws Exception;
  }

  /** What went wrong on the Agent's threads: every test expects none. */
  final List<String> problems = new CopyOnWriteArrayList<>();

  /** How many steps {@link #check} saw. */
  final AtomicInteger reports = new AtomicInteger();

  private final HttpServer server;
  private final ExecutorService handlers = Executors.newFixedThreadPool(4);
  private final ExecutorService work = Executors.newFixedThreadPool(4);

  LocalAgent(Handler handler) throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/wake", handler::wake);
    server.setExecutor(handlers);
    server.start();
  }

  /** The URL to set as {@code agents.webhook.url}. */
  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/wake";
  }

  /** Answers {@code status} without a body and ends the exchange. */
  static void answer(HttpExchange exchange, int status) throws IOException {
    exchange.sendResponseHeaders(status, -1);
    exchange.close();
  }

  /** Runs {@code step} on the Agent's threads; what it throws is a problem. */
  void submit(Step step) {
    work.submit(
        () -> {
          try {
            step.run();
          } catch (Exception e) {
            problems.add(e.toString());
          }
        });
  }

  /** {@code /api/agents/<agentId>/tasks/<taskId>/}: where the wake's Task reports. */
  static String base(JsonNode task) {
    return "/api/agents/"
        + task.path("agentId").asText()
        + "/tasks/"
        + task.path("taskId").asText()
        + "/";
  }

  /** A report that must be taken (200); any other answer is a problem. */
  Answer check(Answer answer) {
    reports.incrementAndGet();
    if (answer.status() != 200) {
      problems.add(answer.status() + " " + answer.text());
    }
    return answer;
  }

  /**
   * Does the wake's attempt as an Agent does, through {@code api}: running, an intent and a claim
   * on each scope, the changeset, the claims released, completed. Answers the changeset's answer.
   */
  Answer complete(ApiClient api, JsonNode task) throws Exception {
    String base = base(task);
    int attempt = task.path("attempt").asInt();
    Map<String, Object> a = Map.of("attempt", attempt);
    check(api.post(base + "running", a));
    List<String> scopes = new ArrayList<>();
    task.path("scopes").forEach(s -> scopes.add(s.asText()));
    for (String scope : scopes) {
      check(api.post(base + "intents", Map.of("attempt", attempt, "key", scope)));
      check(api.post(base + "claims", Map.of("attempt", attempt, "key", scope)));
    }
    Answer changeset = check(api.post(base + "changeset", a));
    for (String scope : scopes) {
      check(api.post(base + "claims/release", Map.of("attempt", attempt, "key", scope)));
    }
    check(api.post(base + "completed", a));
    return changeset;
  }

  @Override
  public void close() {
    server.stop(0);
    handlers.shutdownNow();
    work.shutdownNow();
  }
}
