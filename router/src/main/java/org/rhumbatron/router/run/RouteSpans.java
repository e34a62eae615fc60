package org.rhumbatron.router.run;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.platform.tracing.TraceAttributes;
import org.rhumbatron.platform.tracing.TraceContext;
import org.rhumbatron.platform.tracing.Tracing;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;

/**
 * The "route" spans of one batch of a subscription: one per Event, a child of its publish span (the
 * context the message carries), open while the handler works on the batch. A batch mixes Events of
 * several traces, so no one span is current: a Command the handler sends because of an Event finds
 * its Event's span through {@link #inTraceOfCause}.
 */
public final class RouteSpans {
  private record Key(Subscription subscription, String eventId) {}

  // The route spans open now, across batches and threads (a claiming transaction may run on the
  // database's writer thread).
  private static final Map<Key, Context> OPEN = new ConcurrentHashMap<>();

  private final Subscription subscription;
  private final Map<EventRecord, Span> spans = new IdentityHashMap<>();
  private final List<Key> keys = new ArrayList<>();

  private RouteSpans(Subscription subscription) {
    this.subscription = subscription;
  }

  /** Opens the spans of {@code batch}'s decoded records. */
  static RouteSpans start(Subscription subscription, int streamIndex, List<EventRecord> batch) {
    RouteSpans route = new RouteSpans(subscription);
    boolean tracing = Tracing.current().enabled();
    for (EventRecord r : batch) {
      TraceContext carried = r.decoded() ? r.traceContext() : null;
      if (!r.decoded() || (!tracing && carried == null)) {
        continue; // off, only a context that came in is passed on: nothing to open for this one
      }
      Event e = r.event();
      Span span =
          Tracing.start(
              "route",
              SpanKind.CONSUMER,
              TraceContext.parent(carried),
              TraceAttributes.of(e)
                  .put(TraceAttributes.DESTINATION, EventStreams.streamName(streamIndex))
                  .put(TraceAttributes.CONSUMER, subscription.durableName())
                  .build());
      route.spans.put(r, span);
      Key key = new Key(subscription, e.eventId());
      OPEN.put(key, Context.root().with(span));
      route.keys.add(key);
    }
    return route;
  }

  /** Ends the spans with how their records went. */
  void end(BatchOutcome outcome) {
    keys.forEach(OPEN::remove);
    mark(outcome.deferred(), "deferred", null);
    mark(outcome.waiting(), "waiting", outcome.unavailable());
    mark(outcome.failed(), "failed", outcome.error());
    for (Span span : spans.values()) {
      span.end();
    }
  }

  private void mark(List<EventRecord> records, String how, String error) {
    for (EventRecord r : records) {
      Span span = spans.get(r);
      if (span != null) {
        span.setAttribute(TraceAttributes.OUTCOME, how);
        if (error != null) {
          span.setStatus(StatusCode.ERROR, error);
        }
      }
    }
  }

  /**
   * {@code send} run in the trace of the route span of the Event that caused the Command (its
   * payload's {@code eventId}) under {@code subscription}, so the Command carries that context; in
   * the caller's context when that span is not open.
   */
  public static <R> Function<Command, R> inTraceOfCause(
      Subscription subscription, Function<Command, R> send) {
    return command -> {
      String eventId = command.payload().path("eventId").asText(null);
      Context cause = eventId == null ? null : OPEN.get(new Key(subscription, eventId));
      if (cause == null) {
        return send.apply(command);
      }
      try (Scope scope = cause.makeCurrent()) {
        return send.apply(command);
      }
    };
  }
}
