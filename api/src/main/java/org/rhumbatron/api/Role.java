package org.rhumbatron.api;

import java.util.Locale;

/** Whom a credential speaks for; each route needs an {@link Access} that some roles may pass. */
public enum Role {
  /** Every route: writes, credentials, dead letters, approvals. */
  OPERATOR,
  /** Reads: every GET, the dashboard's data, {@code /metrics} when it is closed. */
  READER,
  /** An Agent outside core: the reads, and the reports on the Tasks it was woken for. */
  AGENT,
  /**
   * A task token ({@code rtk_...}): the reports of the one Task attempt it was issued for, which
   * the report routes check against the token; nothing else.
   */
  TASK;

  /** Bearer values with this prefix are task tokens, checked by the report routes themselves. */
  public static final String TASK_TOKEN_PREFIX = "rtk_";

  /** The name in the API and the CLI: {@code operator}, {@code reader}, {@code agent}. */
  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Whether this role passes a route that needs {@code access}. */
  public boolean may(Access access) {
    return switch (access) {
      case PUBLIC -> true;
      case READ -> this != TASK;
      case REPORT -> this != READER;
      case OPERATE -> this == OPERATOR;
    };
  }

  /** The role of a new credential; a task token is core's to issue, never created by hand. */
  static Role creatable(String wire) {
    for (Role r : values()) {
      if (r != TASK && r.wireName().equals(wire)) {
        return r;
      }
    }
    throw ApiException.badRequest("role", "one of operator, reader, agent; got '" + wire + "'");
  }
}
