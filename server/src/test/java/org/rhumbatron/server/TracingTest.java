package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpExchange;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.tracing.TraceAttributes;
import org.rhumbatron.platform.tracing.Tracing;
import org.rhumbatron.server.ApiClient.Answer;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * One trace from an HTTP request to an Agent's webhook: the request's {@code traceparent} is the
 * parent of the API's server span, the Change it creates commits under it, the publish of {@code
 * change.created} follows the commit (from the outbox row), the causal router's route span follows
 * the publish (from the NATS header), the change.dispatch Command it sends is handled in the same
 * trace, and so is the agent.wake that handler sends, whose webhook POST carries the trace on.
 */
class TracingTest {
  static final String TOKEN = "tracing-test-token";
  // The caller's trace: a span of a service in front of core.
  static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
  static final String CALLER_SPAN = "00f067aa0ba902b7";

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension db = DatabaseExtension.sqlite();
  @TempDir Path data;

  final InMemorySpanExporter spans = InMemorySpanExporter.create();
  OpenTelemetrySdk sdk;
  Tracing.Installed installed;

  @BeforeEach
  void installInMemoryTracing() {
    sdk =
        OpenTelemetrySdk.builder()
            .setTracerProvider(
                SdkTracerProvider.builder()
                    .addSpanProcessor(SimpleSpanProcessor.create(spans))
                    .build())
            .build();
    installed = Tracing.of(sdk).install();
  }

  @AfterEach
  void uninstall() {
    installed.close();
    sdk.close();
  }

  /** The webhook's receiver: records each POST's traceparent and answers 202. */
  static final class Agent implements AutoCloseable {
    final LocalAgent endpoint;
    final List<String> traceparents = new CopyOnWriteArrayList<>();

    Agent() throws Exception {
      endpoint = new LocalAgent(this::wake);
    }

    private void wake(HttpExchange exchange) throws java.io.IOException {
      exchange.getRequestBody().readAllBytes();
      traceparents.add(String.valueOf(exchange.getRequestHeaders().getFirst("traceparent")));
      LocalAgent.answer(exchange, 202);
    }

    String url() {
      return endpoint.url();
    }

    @Override
    public void close() {
      endpoint.close();
    }
  }

  @Test
  void aRequestsTraceReachesTheAgentsWebhookThroughEveryStep() throws Exception {
    try (Agent agent = new Agent();
        CoreService core =
            CoreService.start(
                new CoreConfig(
                    nats.url(),
                    data,
                    db.database().url(),
                    0,
                    Settings.defaults()
                        .with(
                            Map.of(
                                "agents.runtime",
                                "webhook",
                                "agents.webhook.url",
                                agent.url(),
                                "api.token",
                                TOKEN))))) {
      ApiClient api = ApiClient.of(core, TOKEN);
      assertThat(
              api.post("/api/projects", Map.of("projectId", "p-tr", "tenantId", "t1", "name", "T"))
                  .status())
          .isEqualTo(202);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> api.get("/api/projects/p-tr").status() == 200);

      Answer created =
          api.send(
              HttpRequest.newBuilder(
                      URI.create(
                          "http://127.0.0.1:" + core.httpPort() + "/api/projects/p-tr/changes"))
                  .header("Content-Type", "application/json")
                  .header("traceparent", "00-" + TRACE_ID + "-" + CALLER_SPAN + "-01")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          ApiClient.JSON.writeValueAsString(
                              Map.of(
                                  "clientRequestId",
                                  "req-tr",
                                  "tasks",
                                  List.of(
                                      Map.of(
                                          "key", "a", "resourceScopes", List.of("path:a/"))))))));
      assertThat(created.status()).as(created.text()).isEqualTo(201);
      String changeId = created.body().path("changeId").asText();

      SpanData webhook =
          await()
              .atMost(Duration.ofSeconds(30))
              .until(() -> find(s -> s.getName().equals("webhook")), Optional::isPresent)
              .orElseThrow();
      assertThat(webhook.getTraceId()).isEqualTo(TRACE_ID);
      assertThat(webhook.getKind()).isEqualTo(SpanKind.CLIENT);
      assertThat(webhook.getAttributes().get(TraceAttributes.CHANGE_ID)).isEqualTo(changeId);
      assertThat(agent.traceparents).contains("00-" + TRACE_ID + "-" + webhook.getSpanId() + "-01");

      // From the webhook back to the caller, one parent at a time.
      SpanData wake = parentOf(webhook);
      assertThat(wake.getName()).isEqualTo("handle");
      assertThat(wake.getAttributes().get(TraceAttributes.COMMAND_TYPE)).isEqualTo("agent.wake");
      assertThat(wake.getAttributes().get(TraceAttributes.CHANGE_ID)).isEqualTo(changeId);
      assertThat(wake.getAttributes().get(TraceAttributes.CONSUMER)).isEqualTo("q-agent-wakeups");

      SpanData dispatch = parentOf(wake);
      assertThat(dispatch.getName()).isEqualTo("handle");
      assertThat(dispatch.getAttributes().get(TraceAttributes.COMMAND_TYPE))
          .isEqualTo("change.dispatch");
      assertThat(dispatch.getAttributes().get(TraceAttributes.COMMAND_ID)).startsWith("cmd_");

      SpanData route = parentOf(dispatch);
      assertThat(route.getName()).isEqualTo("route");
      assertThat(route.getKind()).isEqualTo(SpanKind.CONSUMER);
      assertThat(route.getAttributes().get(TraceAttributes.EVENT_TYPE)).isEqualTo("change.created");
      assertThat(route.getAttributes().get(TraceAttributes.CHANGE_ID)).isEqualTo(changeId);
      assertThat(route.getAttributes().get(TraceAttributes.CONSUMER)).isEqualTo("causal-router");
      String eventId = route.getAttributes().get(TraceAttributes.EVENT_ID);

      SpanData publish = parentOf(route);
      assertThat(publish.getName()).isEqualTo("publish");
      assertThat(publish.getKind()).isEqualTo(SpanKind.PRODUCER);
      assertThat(publish.getAttributes().get(TraceAttributes.EVENT_ID)).isEqualTo(eventId);

      SpanData commit = parentOf(publish);
      assertThat(commit.getName()).isEqualTo("commit");
      assertThat(commit.getAttributes().get(TraceAttributes.EVENT_IDS)).contains(eventId);
      assertThat(commit.getAttributes().get(TraceAttributes.PROJECT_ID)).isEqualTo("p-tr");
      assertThat(commit.getAttributes().get(TraceAttributes.CHANGE_ID)).isEqualTo(changeId);

      SpanData server = parentOf(commit);
      assertThat(server.getKind()).isEqualTo(SpanKind.SERVER);
      assertThat(server.getName()).isEqualTo("POST /api/projects/{projectId}/changes");
      assertThat(server.getAttributes().get(TraceAttributes.PROJECT_ID)).isEqualTo("p-tr");
      assertThat(server.getParentSpanId()).isEqualTo(CALLER_SPAN);
      assertThat(server.getParentSpanContext().isRemote()).isTrue();
    }
  }

  private Optional<SpanData> find(Predicate<SpanData> which) {
    return spans.getFinishedSpanItems().stream()
        .filter(s -> s.getTraceId().equals(TRACE_ID))
        .filter(which)
        .findFirst();
  }

  /** The parent of {@code span}, waited for: a parent may end after its child. */
  private SpanData parentOf(SpanData span) {
    assertThat(span.getTraceId()).isEqualTo(TRACE_ID);
    return await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> find(s -> s.getSpanId().equals(span.getParentSpanId())), Optional::isPresent)
        .orElseThrow(() -> new AssertionError("no parent of " + span));
  }
}
