package org.rhumbatron.bench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * A loopback stand-in for the Messages API that answers every request with a call of one tool, so
 * the overlap phase measures the router's model path over HTTP without calling the real service.
 * The tests' scripted fake, with errors and delays, is testkit's; a benchmark ships without it.
 */
final class LocalModelApi implements AutoCloseable {
  private final HttpServer server;
  private final ExecutorService handlers;
  private final String tool;
  private final UnaryOperator<String> inputForBody;
  private final AtomicInteger requests = new AtomicInteger();

  /** Answers a request whose body is {@code b} with a call of {@code tool} on {@code input(b)}. */
  LocalModelApi(String tool, UnaryOperator<String> input) {
    this.tool = tool;
    this.inputForBody = input;
    // Headers and body are two writes: without TCP_NODELAY the body waits for a delayed ACK.
    System.setProperty("sun.net.httpserver.nodelay", "true");
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the local model API", e);
    }
    handlers =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "local-model-api");
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(handlers);
    server.createContext("/v1/messages", this::handle);
    server.start();
  }

  String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  int requests() {
    return requests.get();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      requests.incrementAndGet();
      byte[] answer =
          ("{\"id\":\"msg_local\",\"type\":\"message\",\"role\":\"assistant\","
                  + "\"model\":\"claude-haiku-4-5\",\"content\":[{\"type\":\"tool_use\","
                  + "\"id\":\"toolu_local\",\"name\":\""
                  + tool
                  + "\",\"input\":"
                  + inputForBody.apply(body)
                  + "}],\"stop_reason\":\"tool_use\",\"stop_sequence\":null,"
                  + "\"usage\":{\"input_tokens\":120,\"output_tokens\":24}}")
              .getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(200, answer.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(answer);
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
    handlers.shutdownNow();
  }
}
