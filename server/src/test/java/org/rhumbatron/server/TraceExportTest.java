package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.tracing.Tracing;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * Core exports its spans over OTLP/HTTP to {@code otel.exporter.otlp.endpoint}: a local receiver
 * gets them (at the latest when core stops, which sends what is buffered); without the setting core
 * records no span at all.
 */
class TraceExportTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension db = DatabaseExtension.sqlite();
  @TempDir Path data;

  /** One OTLP/HTTP export as the receiver got it. */
  record Export(String method, String path, String contentType, byte[] body) {
    String text() {
      return new String(body, StandardCharsets.ISO_8859_1);
    }
  }

  /** A collector's OTLP/HTTP traces endpoint: takes every POST and answers 200. */
  static final class Receiver implements AutoCloseable {
    final HttpServer server;
    final List<Export> exports = new CopyOnWriteArrayList<>();

    Receiver() throws Exception {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      server.createContext("/", this::take);
      server.start();
    }

    private void take(HttpExchange exchange) throws java.io.IOException {
      exports.add(
          new Export(
              exchange.getRequestMethod(),
              exchange.getRequestURI().getPath(),
              exchange.getRequestHeaders().getFirst("Content-Type"),
              exchange.getRequestBody().readAllBytes()));
      exchange.sendResponseHeaders(200, -1);
      exchange.close();
    }

    String url() {
      return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @Override
    public void close() {
      server.stop(0);
    }
  }

  private CoreService start(Map<String, String> settings) throws Exception {
    return CoreService.start(
        new CoreConfig(
            nats.url(), data, db.database().url(), 0, Settings.defaults().with(settings)));
  }

  @Test
  void coresSpansReachTheOtlpEndpointWhenItIsSet() throws Exception {
    try (Receiver receiver = new Receiver()) {
      try (CoreService core =
          start(
              Map.of(
                  "otel.exporter.otlp.endpoint",
                  receiver.url(),
                  "otel.service.name",
                  "core-under-test"))) {
        assertThat(Tracing.current().enabled()).isTrue();
        ApiClient api = ApiClient.of(core, null);
        assertThat(api.get("/api/projects/p-none").status()).isEqualTo(404);
        assertThat(api.get("/no/such/route").status()).isEqualTo(404);
        // refused by a before-handler (no token set): its span ends all the same
        assertThat(api.post("/api/projects", "{}").status()).isEqualTo(403);
      }
      assertThat(Tracing.current().enabled()).as("uninstalled when core stops").isFalse();
      assertThat(receiver.exports).isNotEmpty();
      Export first = receiver.exports.get(0);
      assertThat(first.method()).isEqualTo("POST");
      assertThat(first.path()).isEqualTo("/v1/traces");
      assertThat(first.contentType()).isEqualTo("application/x-protobuf");
      String all = String.join("\n", receiver.exports.stream().map(Export::text).toList());
      assertThat(all).contains("core-under-test").contains("GET /api/projects/{projectId}");
    }
  }

  @Test
  void withoutTheEndpointCoreRecordsNoSpan() throws Exception {
    try (Receiver receiver = new Receiver();
        CoreService core = start(Map.of())) {
      assertThat(ApiClient.of(core, null).get("/api/projects/p-none").status()).isEqualTo(404);
      assertThat(Tracing.current().enabled()).isFalse();
      Span span = Tracing.start("probe", SpanKind.INTERNAL, Context.root(), Attributes.empty());
      assertThat(span.isRecording()).isFalse();
      assertThat(span.getSpanContext().isValid()).isFalse();
      span.end();
      assertThat(receiver.exports).isEmpty();
    }
  }
}
