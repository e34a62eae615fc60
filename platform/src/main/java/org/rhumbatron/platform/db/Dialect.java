package org.rhumbatron.platform.db;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.stream.Collectors;

/**
 * What really differs between SQLite and PostgreSQL. Everything else is the same SQL in both: both
 * accept {@code INSERT ... ON CONFLICT DO NOTHING}, {@code ON CONFLICT (...) DO UPDATE SET c =
 * excluded.c}, BIGINT epoch milliseconds and TEXT, so the SQL builders here have one default body.
 */
public interface Dialect {

  /** {@code sqlite} or {@code postgres}: also the folder of this dialect's migrations. */
  String name();

  /**
   * {@code INSERT INTO t (a, b) VALUES (?, ?) ON CONFLICT DO NOTHING}: a repeat changes 0 rows (the
   * seed's INSERT OR IGNORE, e.g. {@code processed_events} claims and outbox appends).
   */
  default String insertIgnore(String table, String... columns) {
    return insert(table, columns) + " ON CONFLICT DO NOTHING";
  }

  /**
   * {@code INSERT ... ON CONFLICT (keys) DO UPDATE SET c = excluded.c} for every column that is not
   * a key. {@code columns} lists all inserted columns, keys included.
   */
  default String upsert(String table, List<String> keyColumns, String... columns) {
    String updates =
        List.of(columns).stream()
            .filter(c -> !keyColumns.contains(c))
            .map(c -> c + " = excluded." + c)
            .collect(Collectors.joining(", "));
    String conflict = " ON CONFLICT (" + String.join(", ", keyColumns) + ")";
    return insert(table, columns)
        + conflict
        + (updates.isEmpty() ? " DO NOTHING" : " DO UPDATE SET " + updates);
  }

  /**
   * A DELETE of at most {@code limit} rows matching {@code where}, oldest first by {@code orderBy}
   * (neither database has a portable {@code DELETE ... LIMIT}). Bind the WHERE's parameters as
   * usual; the limit is part of the SQL.
   */
  String deleteLimited(String table, String where, String orderBy, int limit);

  /** DDL for an auto-increment 64-bit primary key column (migrations are per dialect anyway). */
  String autoIncrementPrimaryKey();

  /** DDL type for bytes. */
  String blobType();

  /** Starts a write transaction; SQLite takes the write lock at once (BEGIN IMMEDIATE). */
  void beginWrite(Connection c) throws SQLException;

  /** Starts a read; SQLite opens a read transaction for a consistent snapshot. */
  void beginRead(Connection c) throws SQLException;

  void commit(Connection c) throws SQLException;

  void rollback(Connection c) throws SQLException;

  /** Ends a read started by {@link #beginRead}. */
  void endRead(Connection c) throws SQLException;

  /** True for errors that a rerun of the whole transaction can cure. */
  boolean isTransient(SQLException e);

  /**
   * Makes the running write transaction hold the lock named {@code key} until it commits or rolls
   * back, waiting while a transaction of any process holds it (PostgreSQL: {@code
   * pg_advisory_xact_lock}, sent with the transaction's next statement). Under READ COMMITTED each
   * later statement then sees what the previous holder committed, so it must come before the
   * transaction reads anything. SQLite: nothing, its one writer connection already runs one write
   * transaction at a time.
   */
  default void lockUntilEnd(Tx tx, long key) throws SQLException {}

  /**
   * Has {@code ps} planned at each execution for its values and the tables' sizes then, never by a
   * plan kept from when the tables were small. SQLite plans every statement that way already.
   */
  default void planEachExecution(java.sql.PreparedStatement ps) throws SQLException {}

  private static String insert(String table, String... columns) {
    if (columns.length == 0) {
      throw new IllegalArgumentException("no columns for " + table);
    }
    return "INSERT INTO "
        + table
        + " ("
        + String.join(", ", columns)
        + ") VALUES ("
        + Placeholders.of(columns.length)
        + ")";
  }
}
