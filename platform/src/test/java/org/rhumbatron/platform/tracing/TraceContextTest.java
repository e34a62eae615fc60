package org.rhumbatron.platform.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TraceContextTest {
  // The W3C specification's example.
  static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
  static final String PARENT = "00-" + TRACE_ID + "-00f067aa0ba902b7-01";

  @Test
  void aSpanStartedFromCarriedHeadersIsTheirChildAndItsHeadersNameIt() {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    try (OpenTelemetrySdk sdk =
            OpenTelemetrySdk.builder()
                .setTracerProvider(
                    SdkTracerProvider.builder()
                        .addSpanProcessor(SimpleSpanProcessor.create(exporter))
                        .build())
                .build();
        Tracing.Installed installed = Tracing.of(sdk).install()) {
      TraceContext carried =
          TraceContext.read(Map.of("traceparent", PARENT, "tracestate", "k=v")::get);
      Span span =
          Tracing.start(
              "child", SpanKind.CONSUMER, TraceContext.parent(carried), Attributes.empty());
      Map<String, String> headers = new HashMap<>();
      TraceContext.of(span).writeTo(headers::put);
      span.end();

      SpanData child = exporter.getFinishedSpanItems().get(0);
      assertThat(child.getTraceId()).isEqualTo(TRACE_ID);
      assertThat(child.getParentSpanId()).isEqualTo("00f067aa0ba902b7");
      assertThat(child.getParentSpanContext().isRemote()).isTrue();
      assertThat(headers)
          .containsEntry("traceparent", "00-" + TRACE_ID + "-" + child.getSpanId() + "-01")
          .containsEntry("tracestate", "k=v");
    }
    assertThat(Tracing.current().enabled()).isFalse();
  }

  @Test
  void offACarriedContextGoesOnUnchangedAndNoneIsMadeUp() {
    assertThat(Tracing.current().enabled()).isFalse();
    TraceContext carried = TraceContext.read(Map.of("traceparent", PARENT)::get);
    Span passed =
        Tracing.start("x", SpanKind.CONSUMER, TraceContext.parent(carried), Attributes.empty());
    assertThat(passed.isRecording()).isFalse();
    assertThat(TraceContext.of(passed)).isEqualTo(new TraceContext(PARENT, null));

    Span fresh = Tracing.start("y", SpanKind.INTERNAL, Context.root(), Attributes.empty());
    assertThat(TraceContext.of(fresh)).isNull();
    assertThat(TraceContext.read(Map.<String, String>of()::get)).isNull();
    assertThat(TraceContext.parent(TraceContext.read(Map.of("traceparent", "garbage")::get)))
        .isEqualTo(Context.root());
  }

  @Test
  void theEndpointIsTheCollectorsBaseUrl() {
    assertThat(Tracing.tracesUrl("http://c:4318")).isEqualTo("http://c:4318/v1/traces");
    assertThat(Tracing.tracesUrl("http://c:4318/v1/traces")).isEqualTo("http://c:4318/v1/traces");
    assertThat(Tracing.tracesUrl("http://c:4318/")).isEqualTo("http://c:4318/v1/traces");
  }
}
