package org.rhumbatron.coordinator.outbox;

import org.rhumbatron.coordinator.actor.ActorAddress;
import org.rhumbatron.platform.tracing.TraceContext;

/**
 * An outbox row in {@code pending} or {@code retry_wait}, as a publisher run reads it; {@code
 * trace} is the context of the transaction that wrote it (null: none).
 */
record WaitingRow(
    long seq,
    ActorAddress actor,
    String projectId,
    String eventId,
    byte[] payload,
    OutboxRowState state,
    int attempts,
    long nextAttemptAtMs,
    TraceContext trace) {}
