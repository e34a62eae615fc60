package org.rhumbatron.coordinator.outbox;

import org.rhumbatron.coordinator.actor.ActorAddress;

/** An outbox row in {@code pending} or {@code retry_wait}, as a publisher run reads it. */
record WaitingRow(
    long seq,
    ActorAddress actor,
    String projectId,
    String eventId,
    byte[] payload,
    OutboxRowState state,
    int attempts,
    long nextAttemptAtMs) {}
