package org.rhumbatron.platform.eventlog;

import org.rhumbatron.platform.tracing.TraceContext;

/**
 * Where an Event's message comes from, which it carries in headers beside the body: the trace of
 * the transaction that wrote the Event and the seq of its outbox row ({@link
 * org.rhumbatron.protocol.Headers#OUTBOX_SEQ}). Either may be null: none.
 */
public record EventOrigin(TraceContext trace, Long outboxSeq) {
  public static final EventOrigin NONE = new EventOrigin(null, null);
}
