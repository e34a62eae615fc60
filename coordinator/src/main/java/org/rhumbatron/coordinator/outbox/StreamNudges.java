package org.rhumbatron.coordinator.outbox;

/**
 * The in-process listener that the publisher calls after a successful send (the seed's {@code
 * EVENT_ROUTER.nudge(streamIndex)}); the event router subscribes to it.
 */
@FunctionalInterface
public interface StreamNudges {
  StreamNudges NONE = streamIndex -> {};

  void nudge(int streamIndex);
}
