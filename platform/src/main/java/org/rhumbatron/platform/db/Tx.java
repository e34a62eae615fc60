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
  // A statement to run ahead of the next one, in the same round trip ({@link #aheadOfNext}).
  private String aheadSql;
  private Object aheadArg;

  /** A statement with its arguments bound; {@code led}: the statement ahead runs first in it. */
  private record Bound(PreparedStatement ps, boolean led) {}

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
    try {
      runAhead();
    } catch (SQLException e) {
      throw new DatabaseException(SqlErrors.describe(e), e);
    }
    return connection;
  }

  /**
   * Has {@code sql} (one parameter, {@code arg}; its rows are not read) run just before this
   * transaction's next statement, sent with it in one round trip: PostgreSQL runs them in order,
   * each with its own snapshot, and skips the second when the first fails. For a statement that
   * only has to come first, such as a lock ({@link Dialect#lockUntilEnd}); if nothing follows it in
   * the transaction, it never runs.
   */
  void aheadOfNext(String sql, Object arg) throws SQLException {
    runAhead();
    aheadSql = sql;
    aheadArg = arg;
  }

  /** Runs the statement {@link #aheadOfNext} left waiting, on its own. */
  private void runAhead() throws SQLException {
    if (aheadSql == null) {
      return;
    }
    PreparedStatement ps = prepare(aheadSql);
    try {
      bind(ps, aheadArg);
      aheadSql = null;
      aheadArg = null;
      ps.execute();
    } finally {
      done(ps);
    }
  }

  /** {@code sql} with {@code args} bound, led by the statement waiting ahead of it if any. */
  private Bound bound(String sql, Object[] args, boolean planNow) throws SQLException {
    boolean led = aheadSql != null;
    Object[] all = args;
    if (led) {
      all = new Object[args.length + 1];
      all[0] = aheadArg;
      System.arraycopy(args, 0, all, 1, args.length);
    }
    PreparedStatement ps = prepare(led ? aheadSql + "; " + sql : sql);
    try {
      if (planNow) {
        dialect.planEachExecution(ps);
      }
      bind(ps, all);
    } catch (SQLException | RuntimeException e) {
      done(ps);
      throw e;
    }
    aheadSql = null;
    aheadArg = null;
    return new Bound(ps, led);
  }

  /** Executes {@code b}; when led, steps past the leading statement's result to its own. */
  private static void execute(Bound b) throws SQLException {
    b.ps().execute();
    if (b.led()) {
      b.ps().getMoreResults();
    }
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
    Bound b = bound(sql, args, false);
    try {
      if (!b.led()) {
        return b.ps().executeUpdate();
      }
      execute(b);
      return b.ps().getUpdateCount();
    } finally {
      done(b.ps());
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
    runAhead();
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
    return query(bound(sql, args, false), mapper);
  }

  /**
   * {@link #query}, planned at this execution for these values and the tables as they are now (see
   * {@link Dialect#planEachExecution}): for a lookup on a table that grows from empty.
   */
  public <T> List<T> queryPlannedNow(String sql, RowMapper<T> mapper, Object... args)
      throws SQLException {
    return query(bound(sql, args, true), mapper);
  }

  private <T> List<T> query(Bound b, RowMapper<T> mapper) throws SQLException {
    try {
      b.ps().setMaxRows(0);
      try (ResultSet rs = resultSet(b)) {
        List<T> rows = new ArrayList<>();
        while (rs.next()) {
          rows.add(mapper.map(rs));
        }
        return rows;
      }
    } finally {
      done(b.ps());
    }
  }

  private static ResultSet resultSet(Bound b) throws SQLException {
    if (!b.led()) {
      return b.ps().executeQuery();
    }
    execute(b);
    ResultSet rs = b.ps().getResultSet();
    if (rs == null) {
      throw new SQLException("no rows came back from the query after the statement ahead of it");
    }
    return rs;
  }

  /** The first row of a query, mapped, or empty. */
  public <T> Optional<T> queryFirst(String sql, RowMapper<T> mapper, Object... args)
      throws SQLException {
    Bound b = bound(sql, args, false);
    try {
      b.ps().setMaxRows(1);
      try (ResultSet rs = resultSet(b)) {
        return rs.next() ? Optional.ofNullable(mapper.map(rs)) : Optional.empty();
      }
    } finally {
      done(b.ps());
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
