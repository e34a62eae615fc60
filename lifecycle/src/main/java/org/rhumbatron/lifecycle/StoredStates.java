package org.rhumbatron.lifecycle;

import java.util.Collection;
import java.util.List;
import java.util.Locale;

/** The lower-case names the state columns store for the lifecycle's state enums. */
public final class StoredStates {
  private StoredStates() {}

  public static String dbName(Enum<?> state) {
    return state.name().toLowerCase(Locale.ROOT);
  }

  /** The constant {@code value} names; a value no constant names is a corrupt {@code table} row. */
  public static <E extends Enum<E>> E parse(Class<E> type, String value, String table) {
    for (E e : type.getEnumConstants()) {
      if (dbName(e).equals(value)) {
        return e;
      }
    }
    throw new IllegalStateException(
        "unknown " + type.getSimpleName() + " '" + value + "' in table " + table);
  }

  public static List<String> dbNames(Collection<? extends Enum<?>> states) {
    return states.stream().map(StoredStates::dbName).toList();
  }
}
