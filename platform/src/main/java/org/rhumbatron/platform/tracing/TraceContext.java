package org.rhumbatron.platform.tracing;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * A W3C trace context as it travels: the {@code traceparent} (and {@code tracestate}) header of a
 * NATS message or an HTTP request, or the columns of an outbox row that is published later, maybe
 * by another node.
 */
public record TraceContext(String traceparent, String tracestate) {
  public static final String TRACEPARENT = "traceparent";
  public static final String TRACESTATE = "tracestate";
  private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();

  public TraceContext {
    Objects.requireNonNull(traceparent, "traceparent");
  }

  /** The context of {@code span}, or null when it has none (tracing off, nothing came in). */
  public static TraceContext of(Span span) {
    return of(Context.root().with(span));
  }

  /** The context of the current span, or null. */
  public static TraceContext current() {
    return of(Context.current());
  }

  private static TraceContext of(Context context) {
    Map<String, String> headers = new HashMap<>();
    W3C.inject(context, headers, Map::put);
    String parent = headers.get(TRACEPARENT);
    return parent == null ? null : new TraceContext(parent, headers.get(TRACESTATE));
  }

  /** What {@code header} (a header's value by name, null when absent) carries, or null. */
  public static TraceContext read(Function<String, String> header) {
    String parent = header.apply(TRACEPARENT);
    return parent == null || parent.isBlank()
        ? null
        : new TraceContext(parent, header.apply(TRACESTATE));
  }

  /** Writes the headers ({@code tracestate} only when there is one). */
  public void writeTo(BiConsumer<String, String> header) {
    header.accept(TRACEPARENT, traceparent);
    if (tracestate != null && !tracestate.isEmpty()) {
      header.accept(TRACESTATE, tracestate);
    }
  }

  /** Writes the headers of the current span, if it has a context. */
  public static void writeCurrent(BiConsumer<String, String> header) {
    TraceContext current = current();
    if (current != null) {
      current.writeTo(header);
    }
  }

  /**
   * The parent a span started from {@code carried} gets: its remote span, or none (a new trace)
   * when nothing was carried or it does not parse.
   */
  public static Context parent(TraceContext carried) {
    if (carried == null) {
      return Context.root();
    }
    Map<String, String> headers = new HashMap<>();
    carried.writeTo(headers::put);
    return W3C.extract(Context.root(), headers, MapGetter.INSTANCE);
  }

  private enum MapGetter implements TextMapGetter<Map<String, String>> {
    INSTANCE;

    @Override
    public Iterable<String> keys(Map<String, String> carrier) {
      return List.copyOf(carrier.keySet());
    }

    @Override
    public String get(Map<String, String> carrier, String key) {
      return carrier == null ? null : carrier.get(key);
    }
  }
}
