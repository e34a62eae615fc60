package org.rhumbatron.api;

import io.javalin.Javalin;
import io.javalin.http.Context;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import org.rhumbatron.platform.tracing.TraceAttributes;
import org.rhumbatron.platform.tracing.TraceContext;
import org.rhumbatron.platform.tracing.Tracing;

/**
 * A server span around each request, a child of the request's {@code traceparent}, current while
 * the route runs: a Change a request creates, and the Commands it sends, join the caller's trace.
 */
final class ServerSpans {
  private static final String SPAN = "rhumbatron.span";
  private static final String SCOPE = "rhumbatron.span.scope";
  private static final AttributeKey<String> METHOD = AttributeKey.stringKey("http.request.method");
  private static final AttributeKey<String> PATH = AttributeKey.stringKey("url.path");
  private static final AttributeKey<String> ROUTE = AttributeKey.stringKey("http.route");
  private static final AttributeKey<Long> STATUS =
      AttributeKey.longKey("http.response.status_code");

  private ServerSpans() {}

  /** Registers the span; it must come before every other before-handler, so it covers them. */
  static void mount(Javalin app) {
    app.before(ServerSpans::open);
    app.after(ServerSpans::close);
  }

  private static void open(Context ctx) {
    String method = ctx.method().name();
    Span span =
        Tracing.start(
            method,
            SpanKind.SERVER,
            TraceContext.parent(TraceContext.read(ctx::header)),
            Attributes.of(METHOD, method, PATH, ctx.path()));
    ctx.attribute(SPAN, span);
    ctx.attribute(SCOPE, span.makeCurrent());
  }

  private static void close(Context ctx) {
    Scope scope = ctx.attribute(SCOPE);
    Span span = ctx.attribute(SPAN);
    if (scope == null || span == null) {
      return;
    }
    scope.close();
    String route = route(ctx);
    if (!route.isEmpty()) {
      span.updateName(ctx.method().name() + " " + route);
      span.setAttribute(ROUTE, route);
    }
    int status = ctx.statusCode();
    span.setAttribute(STATUS, (long) status);
    ctx.pathParamMap()
        .forEach(
            (name, value) -> {
              if (name.equals("projectId")) {
                span.setAttribute(TraceAttributes.PROJECT_ID, value);
              } else if (name.equals("changeId")) {
                span.setAttribute(TraceAttributes.CHANGE_ID, value);
              }
            });
    if (status >= 500) {
      span.setStatus(StatusCode.ERROR);
    }
    span.end();
  }

  /** The matched route's path, empty when no route matched (a 404 of an unknown path). */
  private static String route(Context ctx) {
    try {
      String path = ctx.endpointHandlerPath();
      return path == null || path.equals("*") ? "" : path;
    } catch (RuntimeException noEndpoint) {
      return "";
    }
  }
}
