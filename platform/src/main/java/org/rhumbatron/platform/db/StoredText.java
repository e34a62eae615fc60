package org.rhumbatron.platform.db;

/**
 * Text from outside (a poison message's body, an error that quotes it) made storable in every
 * dialect: a PostgreSQL text column refuses the NUL character, so it is stored as the six
 * characters of its JSON escape, which a reader of the row still sees.
 */
public final class StoredText {
  private static final String NUL_ESCAPE = "\\" + "u0000";

  private StoredText() {}

  /** {@code text} with each NUL character written as its JSON escape; null stays null. */
  public static String of(String text) {
    return text == null || text.indexOf('\0') < 0 ? text : text.replace("\0", NUL_ESCAPE);
  }
}
