package org.rhumbatron.platform.tracing;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import org.rhumbatron.platform.config.Settings;

/**
 * Core's spans (commit, publish, route, handle, webhook, HTTP server) go to the tracer installed
 * here: off by default, the OpenTelemetry SDK with an OTLP/HTTP exporter once core starts with
 * {@code otel.exporter.otlp.endpoint}. One per process, as OpenTelemetry's own global: the parts
 * that make spans sit in every module and read no wiring for it. Off, a span is the context it was
 * given, so a {@code traceparent} that came in still goes on unchanged.
 */
public final class Tracing implements AutoCloseable {
  static final String SCOPE = "org.rhumbatron";
  private static final Tracing OFF = new Tracing(OpenTelemetry.noop(), null);
  private static final AtomicReference<Tracing> INSTALLED = new AtomicReference<>(OFF);

  private final Tracer tracer;
  private final AutoCloseable sdk;

  private Tracing(OpenTelemetry otel, AutoCloseable sdk) {
    this.tracer = otel.getTracer(SCOPE);
    this.sdk = sdk;
  }

  /** No spans recorded or exported. */
  public static Tracing off() {
    return OFF;
  }

  /** Spans through {@code otel} (tests: an SDK with an in-memory exporter); its owner closes it. */
  public static Tracing of(OpenTelemetry otel) {
    return new Tracing(Objects.requireNonNull(otel, "otel"), null);
  }

  /**
   * The SDK exporting over OTLP/HTTP when {@code otel.exporter.otlp.endpoint} is set, else {@link
   * #off}. Closing it sends what is still buffered.
   */
  public static Tracing fromSettings(Settings settings) {
    String endpoint = settings.get(Settings.OTEL_ENDPOINT);
    if (endpoint.isEmpty()) {
      return OFF;
    }
    SdkTracerProvider provider =
        SdkTracerProvider.builder()
            .setResource(
                Resource.getDefault()
                    .merge(
                        Resource.create(
                            Attributes.of(
                                AttributeKey.stringKey("service.name"),
                                settings.get(Settings.OTEL_SERVICE_NAME)))))
            .addSpanProcessor(
                BatchSpanProcessor.builder(
                        OtlpHttpSpanExporter.builder().setEndpoint(tracesUrl(endpoint)).build())
                    .build())
            .build();
    OpenTelemetrySdk sdk =
        OpenTelemetrySdk.builder()
            .setTracerProvider(provider)
            .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
            .build();
    return new Tracing(sdk, sdk);
  }

  /** OTLP/HTTP's convention: the endpoint setting is the collector's base URL. */
  static String tracesUrl(String endpoint) {
    String base = endpoint.endsWith("/") ? endpoint.substring(0, endpoint.length() - 1) : endpoint;
    return base.endsWith("/v1/traces") ? base : base + "/v1/traces";
  }

  public boolean enabled() {
    return this != OFF;
  }

  /** The tracer spans go to now. */
  public static Tracing current() {
    return INSTALLED.get();
  }

  /**
   * Makes this the process's tracer; the returned handle puts back the one before (if this is still
   * the one installed then).
   */
  public Installed install() {
    Tracing before = INSTALLED.getAndSet(this);
    return () -> INSTALLED.compareAndSet(this, before);
  }

  /** What {@link #install} returns. */
  @FunctionalInterface
  public interface Installed extends AutoCloseable {
    @Override
    void close();
  }

  /**
   * Starts a span under {@code parent} (a context a message or request carried, or {@link
   * Context#current()}); the caller ends it.
   */
  public static Span start(String name, SpanKind kind, Context parent, Attributes attributes) {
    return current()
        .tracer
        .spanBuilder(name)
        .setSpanKind(kind)
        .setParent(parent)
        .setAllAttributes(attributes)
        .startSpan();
  }

  /** Sends what is buffered and stops the SDK (nothing for {@link #off} or {@link #of}). */
  @Override
  public void close() {
    if (sdk != null) {
      try {
        sdk.close();
      } catch (Exception e) {
        throw new IllegalStateException("closing the OpenTelemetry SDK failed", e);
      }
    }
  }
}
