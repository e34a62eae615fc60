package org.rhumbatron.platform.db;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Prepared statements of one long-lived connection (SQLite's writer and readers), so a hot
 * statement is parsed once instead of in every transaction. Used by one thread at a time, as its
 * connection is.
 */
final class StatementCache {
  private static final int CAPACITY = 128;

  private final Connection connection;
  private final Map<String, PreparedStatement> statements =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, PreparedStatement> eldest) {
          if (size() > CAPACITY) {
            closeQuietly(eldest.getValue());
            return true;
          }
          return false;
        }
      };

  StatementCache(Connection connection) {
    this.connection = connection;
  }

  PreparedStatement get(String sql) throws SQLException {
    PreparedStatement ps = statements.get(sql);
    if (ps == null) {
      ps = connection.prepareStatement(sql);
      statements.put(sql, ps);
    }
    return ps;
  }

  private static void closeQuietly(PreparedStatement ps) {
    try {
      ps.close();
    } catch (SQLException ignored) {
      // The connection is going away or the statement is already closed.
    }
  }
}
