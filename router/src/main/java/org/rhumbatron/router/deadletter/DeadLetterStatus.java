package org.rhumbatron.router.deadletter;

import java.util.Locale;

/** {@code dead_letters.status}: open until a resolution closes it. */
public enum DeadLetterStatus {
  OPEN,
  CLOSED;

  /**
   * The condition on closed rows as a literal, not a parameter: the partial index {@code
   * ix_dead_letters_closed} serves only a query that names its predicate.
   */
  public static final String CLOSED_CONDITION = "status = '" + CLOSED.dbName() + "'";

  public String dbName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
