package org.rhumbatron.platform.db;

import java.util.Collection;
import java.util.Collections;

/**
 * The {@code ?} markers of a SQL list whose length is known only at run time ({@code IN (...)},
 * {@code VALUES (...)}): the values stay parameters, never text spliced into the statement.
 */
public final class Placeholders {
  private Placeholders() {}

  /** {@code ?, ?, ...}: one marker per value. */
  public static String of(Collection<?> values) {
    return of(values.size());
  }

  /** {@code ?, ?, ...}: {@code count} markers. */
  public static String of(int count) {
    return repeat("?", ", ", count);
  }

  /** {@code group} {@code count} times, joined by {@code separator}: a list of compound keys. */
  public static String repeat(String group, String separator, int count) {
    return String.join(separator, Collections.nCopies(count, group));
  }
}
