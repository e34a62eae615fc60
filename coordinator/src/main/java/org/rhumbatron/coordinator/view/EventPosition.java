package org.rhumbatron.coordinator.view;

/**
 * Where an Event stands among the Events of its item, as the project view compares them: the seq of
 * its outbox row (its writer's commit order, null when the message carries none) and its stream
 * sequence (the order the log holds, which a lost tail can make differ from the commit order).
 */
public record EventPosition(Long outboxSeq, long streamSeq) {}
