package org.rhumbatron.platform.db;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/** SQLite 3.35+: explicit BEGIN IMMEDIATE / COMMIT on an auto-commit connection, rowid deletes. */
public final class SqliteDialect implements Dialect {

  public static final SqliteDialect INSTANCE = new SqliteDialect();

  private static final int SQLITE_BUSY = 5;
  private static final int SQLITE_LOCKED = 6;

  private SqliteDialect() {}

  @Override
  public String name() {
    return "sqlite";
  }

  @Override
  public String deleteLimited(String table, String where, String orderBy, int limit) {
    requirePositive(limit);
    return "DELETE FROM "
        + table
        + " WHERE rowid IN (SELECT rowid FROM "
        + table
        + " WHERE "
        + where
        + " ORDER BY "
        + orderBy
        + " LIMIT "
        + limit
        + ")";
  }

  @Override
  public String autoIncrementPrimaryKey() {
    return "INTEGER PRIMARY KEY AUTOINCREMENT";
  }

  @Override
  public String blobType() {
    return "BLOB";
  }

  // The driver's own transaction handling re-begins right after each commit, which with
  // IMMEDIATE would hold the write lock between transactions; so the connection stays in
  // auto-commit mode and the layer sends BEGIN/COMMIT itself.
  @Override
  public void beginWrite(Connection c) throws SQLException {
    exec(c, "BEGIN IMMEDIATE");
  }

  @Override
  public void beginRead(Connection c) throws SQLException {
    exec(c, "BEGIN");
  }

  @Override
  public void commit(Connection c) throws SQLException {
    exec(c, "COMMIT");
  }

  @Override
  public void rollback(Connection c) throws SQLException {
    exec(c, "ROLLBACK");
  }

  @Override
  public void endRead(Connection c) throws SQLException {
    exec(c, "COMMIT");
  }

  @Override
  public boolean isTransient(SQLException e) {
    return SqlErrors.anyInChain(
        e,
        s -> {
          int primary = s.getErrorCode() & 0xff;
          String m = String.valueOf(s.getMessage());
          return primary == SQLITE_BUSY
              || primary == SQLITE_LOCKED
              || m.contains("SQLITE_BUSY")
              || m.contains("SQLITE_LOCKED");
        });
  }

  private static void exec(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  static void requirePositive(int limit) {
    if (limit <= 0) {
      throw new IllegalArgumentException("limit must be positive, was " + limit);
    }
  }

  @Override
  public String toString() {
    return name();
  }
}
