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

  /**
   * {@code pattern.matcher(value).matches()}, by a loop over the characters for the patterns above
   * (the event router checks every id of every Event it decodes, and a regex match costs more than
   * the rest of the check); other patterns go to the regex. IdFormatTest holds the two to the same
   * answers.
   */
  static boolean matches(Pattern pattern, String value) {
    if (pattern == ID_PATTERN) {
      return isIdLike(value, 0, 200);
    }
    if (pattern == REFERENCE_PATTERN) {
      return isIdLike(value, 0, 512);
    }
    if (pattern == EVENT_ID_PATTERN) {
      return isEventId(value);
    }
    if (pattern == COMMAND_ID_PATTERN) {
      return value.length() >= 5 && value.startsWith("cmd_") && idTail(value, 4, 508);
    }
    if (pattern == RESOURCE_PATTERN && value.length() <= 1024) {
      // At most 1,024 chars is at most 1,024 code points; a longer string goes to the regex,
      // which counts code points.
      return !value.isEmpty() && noControlCharacters(value);
    }
    return pattern.matcher(value).matches();
  }

  /** {@code [A-Za-z0-9][A-Za-z0-9_.:-]{0,max-1}} from {@code from} to the end. */
  private static boolean isIdLike(String value, int from, int max) {
    int n = value.length() - from;
    return n >= 1 && n <= max && isAlnum(value.charAt(from)) && idTail(value, from + 1, max - 1);
  }

  /** {@code [A-Za-z0-9_.:-]{0,max}} from {@code from} to the end. */
  private static boolean idTail(String value, int from, int max) {
    if (value.length() - from > max) {
      return false;
    }
    for (int i = from; i < value.length(); i++) {
      char c = value.charAt(i);
      if (!(isAlnum(c) || c == '_' || c == '.' || c == ':' || c == '-')) {
        return false;
      }
    }
    return true;
  }

  private static boolean isAlnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  }

  private static boolean isEventId(String value) {
    if (value.length() != 36 || !value.startsWith("evt_")) {
      return false;
    }
    for (int i = 4; i < 36; i++) {
      char c = value.charAt(i);
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
        return false;
      }
    }
    return true;
  }

  private static boolean noControlCharacters(String value) {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c <= 0x1F || c == 0x7F) {
        return false;
      }
    }
    return true;
  }

  /**
   * {@link #TIMESTAMP}: {@code yyyy-mm-ddThh:mm:ss}, then an optional 1-9 digit fraction, then Z.
   */
  static boolean isTimestamp(String value) {
    int n = value.length();
    if (n < 20 || value.charAt(n - 1) != 'Z') {
      return false;
    }
    String shape = "dddd-dd-ddTdd:dd:dd";
    for (int i = 0; i < shape.length(); i++) {
      char want = shape.charAt(i);
      char c = value.charAt(i);
      if (want == 'd' ? !(c >= '0' && c <= '9') : c != want) {
        return false;
      }
    }
    int fraction = n - 1 - shape.length();
    if (fraction == 0) {
      return true;
    }
    if (fraction < 2 || fraction > 10 || value.charAt(shape.length()) != '.') {
      return false;
    }
    for (int i = shape.length() + 1; i < n - 1; i++) {
      char c = value.charAt(i);
      if (!(c >= '0' && c <= '9')) {
        return false;
      }
    }
    return true;
  }
}
