package org.rhumbatron.platform.db;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One open transaction, handed to a {@link TxWork}. Valid only while the work runs, on its thread.
 * Arguments bind by type: {@code byte[]} as a blob/bytea, {@code null} as SQL NULL, the rest with
 * {@link PreparedStatement#setObject}; pass times as {@code long} epoch milliseconds.
 */
public final class Tx {

  private final Connection connection;
  private final Dialect dialect;
  private final StatementCache cache;

  Tx(Connection connection, Dialect dialect, StatementCache cache) {
    this.connection = connection;
    this.dialect = dialect;
    this.cache = cache;
  }

  /** A statement for {@code sql}: cached on long-lived connections, else prepared now. */
  private PreparedStatement prepare(String sql) throws SQLException {
    if (cache == null) {
      return connection.prepareStatement(sql);
    }
    PreparedStatement ps = cache.get(sql);
    ps.clearParameters();
    return ps;
  }

  /** Closes a statement that is not cached; a cached one stays open for the next use. */
  private void done(PreparedStatement ps) throws SQLException {
    if (cache == null) {
      ps.close();
    }
  }

  /** The underlying connection; do not commit, roll back or close it. */
  public Connection connection() {
    return connection;
  }

  public Dialect dialect() {
    return dialect;
  }

  /**
   * Holds the lock named {@code key} until this transaction ends ({@link Dialect#lockUntilEnd}):
   * call it before the first read.
   */
  public void lockUntilEnd(long key) throws SQLException {
    dialect.lockUntilEnd(this, key);
  }

  /** Runs an INSERT, UPDATE or DELETE and returns the number of rows changed. */
  public int update(String sql, Object... args) throws SQLException {
    PreparedStatement ps = prepare(sql);
    try {
      bind(ps, args);
      return ps.executeUpdate();
    } finally {
      done(ps);
    }
  }

  /**
   * Runs one INSERT, UPDATE or DELETE once per row of {@code rows} (each its arguments) as one JDBC
   * batch, and returns the rows changed by each, in order. PostgreSQL gets the batch in one round
   * trip instead of one per row; SQLite runs the rows one after another as {@link #update} would.
   */
  public int[] updateBatch(String sql, List<Object[]> rows) throws SQLException {
    if (rows.isEmpty()) {
      return new int[0];
    }
    int columns = rows.get(0).length;
    for (int i = 1; i < rows.size(); i++) {
      if (rows.get(i).length != columns) {
        throw new IllegalArgumentException(
            "row " + i + " has " + rows.get(i).length + " values, row 0 has " + columns);
      }
    }
    PreparedStatement ps = prepare(sql);
    try {
      for (Object[] row : rows) {
        bind(ps, row);
        ps.addBatch();
      }
      int[] counts = ps.executeBatch();
      if (counts.length != rows.size()) {
        throw new SQLException(
            "the batch of " + rows.size() + " rows reported " + counts.length + " counts: " + sql);
      }
      for (int count : counts) {
        if (count < 0) {
          // SUCCESS_NO_INFO, e.g. pgjdbc with reWriteBatchedInserts=true in the URL: callers
          // tell fresh rows from repeats by these counts, so a batch without them is refused.
          throw new SQLException(
              "the driver reported no row counts for the batch (remove reWriteBatchedInserts from"
                  + " the database URL): "
                  + sql);
        }
      }
      return counts;
    } finally {
      try {
        // sqlite-jdbc and pgjdbc clear a failed batch themselves; a cached statement stays clean
        // whatever the driver does.
        ps.clearBatch();
      } finally {
        done(ps);
      }
    }
  }

  /** All rows of a query, mapped. */
  public <T> List<T> query(String sql, RowMapper<T> mapper, Object... args) throws SQLException {
    return query(prepare(sql), mapper, args);
  }

  /**
   * {@link #query}, planned at this execution for these values and the tables as they are now (see
   * {@link Dialect#planEachExecution}): for a lookup on a table that grows from empty.
   */
  public <T> List<T> queryPlannedNow(String sql, RowMapper<T> mapper, Object... args)
      throws SQLException {
    PreparedStatement ps = prepare(sql);
    dialect.planEachExecution(ps);
    return query(ps, mapper, args);
  }

  private <T> List<T> query(PreparedStatement ps, RowMapper<T> mapper, Object... args)
      throws SQLException {
    try {
      bind(ps, args);
      ps.setMaxRows(0);
      try (ResultSet rs = ps.executeQuery()) {
        List<T> rows = new ArrayList<>();
        while (rs.next()) {
          rows.add(mapper.map(rs));
        }
        return rows;
      }
    } finally {
      done(ps);
    }
  }

  /** The first row of a query, mapped, or empty. */
  public <T> Optional<T> queryFirst(String sql, RowMapper<T> mapper, Object... args)
      throws SQLException {
    PreparedStatement ps = prepare(sql);
    try {
      bind(ps, args);
      ps.setMaxRows(1);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.ofNullable(mapper.map(rs)) : Optional.empty();
      }
    } finally {
      done(ps);
    }
  }

  /** The first column of the first row as a long, for counts and sums (NULL reads as 0). */
  public long queryLong(String sql, Object... args) throws SQLException {
    return queryFirst(sql, rs -> rs.getLong(1), args)
        .orElseThrow(() -> new SQLException("no row from: " + sql));
  }

  static void bind(PreparedStatement ps, Object... args) throws SQLException {
    for (int i = 0; i < args.length; i++) {
      Object arg = args[i];
      if (arg == null) {
        ps.setNull(i + 1, Types.NULL);
      } else if (arg instanceof byte[] bytes) {
        ps.setBytes(i + 1, bytes);
      } else {
        ps.setObject(i + 1, arg);
      }
    }
  }
}
