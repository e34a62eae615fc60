package org.rhumbatron.platform.cluster;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * The system clock until {@link #freeze}: a zombie's view of time in the several-core tests. A
 * process paused in the middle of its work resumes with that work past its last check of the lease;
 * freezing the clock at the pause lets a test drive such work after the lease lapsed.
 */
public final class FreezableClock extends Clock {
  private volatile Instant frozenAt;

  /** From now on, every read answers this instant. */
  public void freeze() {
    frozenAt = Instant.now();
  }

  /** Back to the system clock, as a process resumed from its pause reads it. */
  public void thaw() {
    frozenAt = null;
  }

  @Override
  public Instant instant() {
    Instant f = frozenAt;
    return f != null ? f : Instant.now();
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    throw new UnsupportedOperationException("a test clock in UTC only");
  }
}
