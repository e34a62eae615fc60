package org.rhumbatron.protocol;

import java.util.regex.Pattern;

/**
 * The shapes of ids and timestamps on the wire, as regular expressions.
 *
 * <p>The same texts appear in the JSON Schema files; a test fails when the two drift. They are
 * anchored and use only syntax that Java and ECMA-262 read alike, so the schemas mean the same in
 * every language. Ids are printable ASCII without spaces because they end up in NATS headers
 * ({@code Nats-Msg-Id}) and in SQL keys.
 */
public final class IdFormat {

  /** Tenant, project, change, task, candidate and actor ids: 1 to 200 characters. */
  public static final String ID = "^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$";

  /**
   * causedBy and correlationId: an Event id, a Command id or another id, so as long as a Command
   * id.
   */
  public static final String REFERENCE = "^[A-Za-z0-9][A-Za-z0-9_.:-]{0,511}$";

  /** Stable and random Event ids alike: {@code evt_} and 32 lowercase hex digits (16 bytes). */
  public static final String EVENT_ID = "^evt_[0-9a-f]{32}$";

  /** Command ids, e.g. {@code cmd_<event>_<task>}; long enough for an Event id plus a Task id. */
  public static final String COMMAND_ID = "^cmd_[A-Za-z0-9_.:-]{1,508}$";

  /** Resource keys such as {@code path:src/api/}: any text without control characters. */
  public static final String RESOURCE = "^[^\\u0000-\\u001F\\u007F]{1,1024}$";

  /** ISO-8601 in UTC with a {@code Z}, as {@link java.time.Instant#toString()} writes it. */
  public static final String TIMESTAMP =
      "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?Z$";

  static final Pattern ID_PATTERN = Pattern.compile(ID);
  static final Pattern REFERENCE_PATTERN = Pattern.compile(REFERENCE);
  static final Pattern EVENT_ID_PATTERN = Pattern.compile(EVENT_ID);
  static final Pattern COMMAND_ID_PATTERN = Pattern.compile(COMMAND_ID);
  static final Pattern RESOURCE_PATTERN = Pattern.compile(RESOURCE);

  private IdFormat() {}

  /** Whether {@code value} is a valid tenant, project, change, task, candidate or actor id. */
  public static boolean isId(String value) {
    return value != null && ID_PATTERN.matcher(value).matches();
  }
}
