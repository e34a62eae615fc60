package org.rhumbatron.router.causal;

import java.time.LocalDate;
import org.rhumbatron.platform.db.Database;

/**
 * The calls per UTC day in {@code clef_flash_calls}: a slot is reserved before the call, in a short
 * transaction of its own, so concurrent routers and a restart share one count and a call that fails
 * still counts.
 */
final class ClefFlashBudget {
  private static final String OPEN_DAY =
      "INSERT INTO clef_flash_calls (day_utc, calls) VALUES (?, 0) ON CONFLICT DO NOTHING";
  private static final String TAKE_ONE =
      "UPDATE clef_flash_calls SET calls = calls + 1 WHERE day_utc = ? AND calls < ?";

  private final Database db;
  private final int callsPerDay;

  ClefFlashBudget(Database db, int callsPerDay) {
    this.db = db;
    this.callsPerDay = callsPerDay;
  }

  /** Takes one call of {@code day}; false when the day's calls are used up. */
  boolean reserve(LocalDate day) {
    String key = day.toString();
    int taken =
        db.inTransaction(
            tx -> {
              tx.update(OPEN_DAY, key);
              return tx.update(TAKE_ONE, key, callsPerDay);
            });
    return taken == 1;
  }

  int callsPerDay() {
    return callsPerDay;
  }
}
