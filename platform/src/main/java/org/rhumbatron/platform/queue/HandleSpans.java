package org.rhumbatron.platform.queue;

import io.nats.client.Message;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import org.rhumbatron.platform.tracing.TraceAttributes;
import org.rhumbatron.platform.tracing.TraceContext;
import org.rhumbatron.platform.tracing.Tracing;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.Headers;
import org.rhumbatron.protocol.Queue;

/**
 * The "handle" span of one handler run of a queue message: a child of the context the message
 * carries (its sender's), with the queue, the consumer and the Command's ids.
 */
final class HandleSpans {
  private HandleSpans() {}

  static Span start(Queue queue, Message m) {
    io.nats.client.impl.Headers h = m.getHeaders();
    AttributesBuilder b =
        Attributes.builder()
            .put(TraceAttributes.DESTINATION, queue.subject())
            .put(TraceAttributes.CONSUMER, queue.durableName());
    if (h != null) {
      TraceAttributes.putIfSet(b, TraceAttributes.MESSAGE_ID, h.getFirst(Headers.MSG_ID));
      TraceAttributes.putIfSet(b, TraceAttributes.COMMAND_TYPE, h.getFirst(Headers.COMMAND_TYPE));
      TraceAttributes.putIfSet(b, TraceAttributes.PROJECT_ID, h.getFirst(Headers.PROJECT_ID));
    }
    TraceContext carried = h == null ? null : TraceContext.read(h::getFirst);
    return Tracing.start("handle", SpanKind.CONSUMER, TraceContext.parent(carried), b.build());
  }

  /** The decoded message's ids, when it is a Command. */
  static void decoded(Span span, Object message) {
    if (message instanceof Command c) {
      span.setAllAttributes(TraceAttributes.of(c).build());
    }
  }

  static void outcome(Span span, Outcome outcome) {
    span.setAttribute(
        TraceAttributes.OUTCOME,
        outcome.getClass().getSimpleName().toLowerCase(java.util.Locale.ROOT));
    if (outcome instanceof Outcome.Retry retry) {
      span.setStatus(StatusCode.ERROR, String.valueOf(retry.reason()));
    } else if (outcome instanceof Outcome.Reject reject) {
      span.setStatus(StatusCode.ERROR, String.valueOf(reject.reason()));
    }
  }
}
