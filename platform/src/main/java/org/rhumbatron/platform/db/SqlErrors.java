package org.rhumbatron.platform.db;

import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.function.Predicate;

final class SqlErrors {

  private SqlErrors() {}

  /** True when {@code test} holds for {@code e} or any SQLException in its cause/next chains. */
  static boolean anyInChain(SQLException e, Predicate<SQLException> test) {
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    ArrayDeque<Throwable> todo = new ArrayDeque<>();
    todo.add(e);
    while (!todo.isEmpty()) {
      Throwable t = todo.poll();
      if (!seen.add(t)) {
        continue;
      }
      if (t instanceof SQLException s) {
        if (test.test(s)) {
          return true;
        }
        if (s.getNextException() != null) {
          todo.add(s.getNextException());
        }
      }
      if (t.getCause() != null) {
        todo.add(t.getCause());
      }
    }
    return false;
  }

  /** A one-line description: message plus SQL state and vendor code when present. */
  static String describe(SQLException e) {
    StringBuilder b = new StringBuilder(String.valueOf(e.getMessage()));
    if (e.getSQLState() != null) {
      b.append(" (SQLState ").append(e.getSQLState());
      if (e.getErrorCode() != 0) {
        b.append(", code ").append(e.getErrorCode());
      }
      b.append(')');
    } else if (e.getErrorCode() != 0) {
      b.append(" (code ").append(e.getErrorCode()).append(')');
    }
    return b.toString();
  }
}
