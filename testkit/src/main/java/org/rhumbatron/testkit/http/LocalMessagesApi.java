package org.rhumbatron.testkit.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * An HTTP server on a free port of 127.0.0.1 that answers {@code POST /v1/messages} as the Messages
 * API would: a message with a {@code tool_use} or text block, an error status with the API's error
 * JSON, a slow answer, or garbage. Each request takes the next {@linkplain #enqueue queued} answer,
 * else the {@linkplain #answerWith answer function}'s; with neither it gets a 500 {@code api_error}
 * saying so. It counts its requests and keeps the last one. Clef-flash's tests point the client at
 * it, so no test calls the real service.
 *
 * <pre>{@code
 * try (LocalMessagesApi api = LocalMessagesApi.start()) {
 *   api.enqueue(Answer.toolUse("route_wake", "{\"decision\":\"wake\",\"probability\":0.9}"));
 *   ... point the client at api.baseUrl() ...
 *   assertThat(api.lastRequest().orElseThrow().body()).contains("\"tool_choice\"");
 * }
 * }</pre>
 */
public final class LocalMessagesApi implements AutoCloseable {
  public static final String PATH = "/v1/messages";

  /** One request as received: header names in lower case. */
  public record Request(
      String method, String path, Map<String, List<String>> headers, String body) {
    /** The first value of header {@code name} (any case). */
    public Optional<String> header(String name) {
      List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
      return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
    }
  }

  /**
   * One scripted answer: a status, a content type and a body, sent after {@code delay}.
   *
   * @param delay how long the fake waits before it answers (a slow API)
   */
  public record Answer(int status, String contentType, String body, Duration delay) {
    private static final String JSON = "application/json";

    public Answer {
      Objects.requireNonNull(contentType, "contentType");
      Objects.requireNonNull(body, "body");
      Objects.requireNonNull(delay, "delay");
    }

    /** A message whose one content block is a call of {@code tool} with {@code inputJson}. */
    public static Answer toolUse(String tool, String inputJson) {
      String block =
          "{\"type\":\"tool_use\",\"id\":\"toolu_fake_1\",\"name\":"
              + quote(tool)
              + ",\"input\":"
              + inputJson
              + "}";
      return message(block, "tool_use");
    }

    /** A well-formed message with only a text block: no tool call. */
    public static Answer text(String text) {
      return message("{\"type\":\"text\",\"text\":" + quote(text) + "}", "end_turn");
    }

    /**
     * An error as the API sends it, e.g. 500 {@code api_error}, 529 {@code overloaded_error}, 401
     * {@code authentication_error}, 429 {@code rate_limit_error}.
     */
    public static Answer error(int status, String type, String message) {
      String body =
          "{\"type\":\"error\",\"error\":{\"type\":"
              + quote(type)
              + ",\"message\":"
              + quote(message)
              + "},\"request_id\":\"req_fake_1\"}";
      return new Answer(status, JSON, body, Duration.ZERO);
    }

    /** A 200 whose body is not JSON at all, declared as JSON. */
    public static Answer garbage() {
      return new Answer(200, JSON, "<html>502 bad gateway, or so</html>{{", Duration.ZERO);
    }

    /** Any status and body. */
    public static Answer raw(int status, String contentType, String body) {
      return new Answer(status, contentType, body, Duration.ZERO);
    }

    /** This answer, sent after {@code delay}. */
    public Answer after(Duration delay) {
      return new Answer(status, contentType, body, delay);
    }

    private static Answer message(String block, String stopReason) {
      String body =
          "{\"id\":\"msg_fake_1\",\"type\":\"message\",\"role\":\"assistant\","
              + "\"model\":\"claude-haiku-4-5\",\"content\":["
              + block
              + "],\"stop_reason\":"
              + quote(stopReason)
              + ",\"stop_sequence\":null,"
              + "\"usage\":{\"input_tokens\":120,\"output_tokens\":24}}";
      return new Answer(200, JSON, body, Duration.ZERO);
    }

    /** A JSON string literal. */
    static String quote(String s) {
      StringBuilder out = new StringBuilder("\"");
      for (char c : s.toCharArray()) {
        switch (c) {
          case '"' -> out.append("\\\"");
          case '\\' -> out.append("\\\\");
          case '\n' -> out.append("\\n");
          case '\r' -> out.append("\\r");
          case '\t' -> out.append("\\t");
          default -> {
            if (c < 0x20) {
              out.append(String.format("\\u%04x", (int) c));
            } else {
              out.append(c);
            }
          }
        }
      }
      return out.append('"').toString();
    }
  }

  private final HttpServer server;
  private final ExecutorService handlers;
  private final Deque<Answer> queue = new ArrayDeque<>();
  private final AtomicReference<Function<Request, Answer>> function = new AtomicReference<>();
  private final AtomicInteger requests = new AtomicInteger();
  private final AtomicReference<Request> last = new AtomicReference<>();

  private LocalMessagesApi(HttpServer server, ExecutorService handlers) {
    this.server = server;
    this.handlers = handlers;
  }

  /** Starts the fake on a free port of 127.0.0.1. */
  public static LocalMessagesApi start() {
    // Headers and body are two writes: without TCP_NODELAY the body waits for a delayed ACK.
    System.setProperty("sun.net.httpserver.nodelay", "true");
    HttpServer server;
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the local Messages API", e);
    }
    // One thread per request, so a slow answer does not hold up the next request.
    ExecutorService handlers =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "fake-messages-api");
              t.setDaemon(true);
              return t;
            });
    LocalMessagesApi api = new LocalMessagesApi(server, handlers);
    server.setExecutor(handlers);
    server.createContext("/", api::handle);
    server.start();
    return api;
  }

  /** {@code http://127.0.0.1:<port>}, the base URL to give a client. */
  public String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /** Queues answers for the next requests, in order; they go before the answer function. */
  public synchronized LocalMessagesApi enqueue(Answer... answers) {
    queue.addAll(List.of(answers));
    return this;
  }

  /** Answers every request that finds the queue empty with {@code f} of the request. */
  public LocalMessagesApi answerWith(Function<Request, Answer> f) {
    function.set(f);
    return this;
  }

  /** How many requests arrived, on any path. */
  public int requests() {
    return requests.get();
  }

  /** The last request received. */
  public Optional<Request> lastRequest() {
    return Optional.ofNullable(last.get());
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      Map<String, List<String>> headers = new TreeMap<>();
      exchange
          .getRequestHeaders()
          .forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), List.copyOf(v)));
      Request request =
          new Request(
              exchange.getRequestMethod(),
              exchange.getRequestURI().getPath(),
              Map.copyOf(headers),
              body);
      last.set(request);
      requests.incrementAndGet();
      Answer answer = answerFor(request);
      if (!answer.delay().isZero()) {
        try {
          Thread.sleep(answer.delay().toMillis());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return; // closing: drop the answer
        }
      }
      byte[] bytes = answer.body().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", answer.contentType());
      exchange.getResponseHeaders().set("request-id", "req_fake_" + requests.get());
      try (OutputStream out = exchange.getResponseBody()) {
        exchange.sendResponseHeaders(answer.status(), bytes.length);
        out.write(bytes);
      } catch (IOException e) {
        // The client gave up (a timeout): nobody reads the answer.
      }
    }
  }

  private Answer answerFor(Request request) {
    if (!"POST".equals(request.method()) || !PATH.equals(request.path())) {
      return Answer.error(
          404, "not_found_error", request.method() + " " + request.path() + " is not faked");
    }
    synchronized (this) {
      Answer next = queue.poll();
      if (next != null) {
        return next;
      }
    }
    Function<Request, Answer> f = function.get();
    return f != null ? f.apply(request) : Answer.error(500, "api_error", "no answer scripted");
  }

  @Override
  public void close() {
    server.stop(0);
    handlers.shutdownNow();
  }
}
