package org.rhumbatron.platform.db;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Set;

/** PostgreSQL 13+: JDBC transactions on pooled connections, ctid deletes, advisory locks. */
public final class PostgresDialect implements Dialect {

  public static final PostgresDialect INSTANCE = new PostgresDialect();

  /**
   * serialization_failure, deadlock_detected, and idle_in_transaction_session_timeout: the server
   * ended a session that sat in a transaction too long (its process was paused), and rolled the
   * transaction back before its COMMIT arrived, so a rerun on a fresh connection is safe.
   */
  private static final Set<String> TRANSIENT_STATES = Set.of("40001", "40P01", "25P03");

  private PostgresDialect() {}

  @Override
  public String name() {
    return "postgres";
  }

  @Override
  public String deleteLimited(String table, String where, String orderBy, int limit) {
    SqliteDialect.requirePositive(limit);
    // = ANY(ARRAY(...)) plans as a TID scan; IN (SELECT ctid ...) would scan the table.
    return "DELETE FROM "
        + table
        + " WHERE ctid = ANY(ARRAY(SELECT ctid FROM "
        + table
        + " WHERE "
        + where
        + " ORDER BY "
        + orderBy
        + " LIMIT "
        + limit
        + "))";
  }

  @Override
  public String autoIncrementPrimaryKey() {
    return "BIGSERIAL PRIMARY KEY";
  }

  @Override
  public String blobType() {
    return "BYTEA";
  }

  @Override
  public void beginWrite(Connection c) throws SQLException {
    c.setAutoCommit(false);
  }

  @Override
  public void beginRead(Connection c) {
    // Auto-commit statements: READ COMMITTED gives no cross-statement snapshot anyway.
  }

  @Override
  public void commit(Connection c) throws SQLException {
    c.commit();
    c.setAutoCommit(true);
  }

  @Override
  public void rollback(Connection c) throws SQLException {
    c.rollback();
    c.setAutoCommit(true);
  }

  @Override
  public void endRead(Connection c) {}

  /**
   * pgjdbc prepares a statement on the server after 5 runs, and PostgreSQL may then keep a generic
   * plan made on a small, never analyzed table (a seq scan), however large the table grows. A
   * threshold of 0 keeps the statement unnamed, so the server plans it at each execution.
   */
  @Override
  public void planEachExecution(java.sql.PreparedStatement ps) throws SQLException {
    ps.unwrap(org.postgresql.PGStatement.class).setPrepareThreshold(0);
  }

  @Override
  public void lockUntilEnd(Tx tx, long key) throws SQLException {
    // Sent with the transaction's next statement: one round trip less, and still taken before
    // that statement reads.
    tx.aheadOfNext("SELECT pg_advisory_xact_lock(?)", key);
  }

  @Override
  public boolean isTransient(SQLException e) {
    return SqlErrors.anyInChain(e, s -> TRANSIENT_STATES.contains(s.getSQLState()));
  }

  @Override
  public String toString() {
    return name();
  }
}
