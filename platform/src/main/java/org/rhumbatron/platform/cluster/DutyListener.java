package org.rhumbatron.platform.cluster;

/** Told on the ownership's thread when this node gains or loses a duty; must not block long. */
public interface DutyListener {
  void gained(Duty duty, long epoch);

  default void lost(Duty duty) {}
}
