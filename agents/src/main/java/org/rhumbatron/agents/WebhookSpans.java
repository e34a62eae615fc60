package org.rhumbatron.agents;

import com.fasterxml.jackson.databind.JsonNode;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Context;
import java.net.URI;
import org.rhumbatron.platform.tracing.TraceAttributes;
import org.rhumbatron.platform.tracing.Tracing;

/** The "webhook" span of one POST to an Agent, with the Task's ids and the answer's status. */
final class WebhookSpans {
  static final AttributeKey<String> KIND = AttributeKey.stringKey("rhumbatron.webhook.kind");
  static final AttributeKey<Long> STATUS = AttributeKey.longKey("http.response.status_code");
  private static final AttributeKey<String> METHOD = AttributeKey.stringKey("http.request.method");
  private static final AttributeKey<String> URL = AttributeKey.stringKey("url.full");

  private WebhookSpans() {}

  static Span start(URI url, JsonNode body) {
    AttributesBuilder b = io.opentelemetry.api.common.Attributes.builder();
    b.put(METHOD, "POST").put(URL, url.toString());
    TraceAttributes.putIfSet(b, KIND, body.path("kind").asText(null));
    TraceAttributes.putIfSet(b, TraceAttributes.TASK_ID, body.path("taskId").asText(null));
    TraceAttributes.putIfSet(b, TraceAttributes.CHANGE_ID, body.path("changeId").asText(null));
    TraceAttributes.putIfSet(b, TraceAttributes.PROJECT_ID, body.path("projectId").asText(null));
    TraceAttributes.putIfSet(b, TraceAttributes.AGENT_ID, body.path("agentId").asText(null));
    TraceAttributes.putIfSet(b, TraceAttributes.COMMAND_ID, body.path("commandId").asText(null));
    TraceAttributes.putIfSet(b, TraceAttributes.EVENT_ID, body.path("eventId").asText(null));
    return Tracing.start("webhook", SpanKind.CLIENT, Context.current(), b.build());
  }

  /** {@code status} 0: no answer; {@code error} null: none. */
  static void end(Span span, int status, Throwable error) {
    if (status > 0) {
      span.setAttribute(STATUS, (long) status);
    }
    if (error != null) {
      span.setStatus(StatusCode.ERROR, String.valueOf(error.getMessage()));
    } else if (status / 100 != 2) {
      span.setStatus(StatusCode.ERROR, "answered " + status);
    }
    span.end();
  }
}
