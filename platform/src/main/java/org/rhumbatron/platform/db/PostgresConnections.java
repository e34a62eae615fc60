package org.rhumbatron.platform.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;

/** A HikariCP pool; writers and readers are the same kind of pooled connection. */
final class PostgresConnections implements ConnectionSource {

  private final HikariDataSource pool;

  PostgresConnections(
      DatabaseUrl url, int poolSize, java.time.Duration idleInTransaction, String password) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url.jdbcUrl());
    if (password != null) {
      config.setPassword(password); // the URL's user, this password
    }
    config.setMaximumPoolSize(poolSize);
    config.setPoolName("rhumbatron-db");
    config.setAutoCommit(true);
    // A process paused inside a transaction would hold its row and actor locks for good; the
    // server ends such a session after this long, and the lock's next waiter goes on.
    config.setConnectionInitSql(
        "SET idle_in_transaction_session_timeout = " + idleInTransaction.toMillis());
    // Fail at open, with the driver's reason, rather than at the first transaction.
    config.setInitializationFailTimeout(1);
    this.pool = new HikariDataSource(config);
  }

  @Override
  public Connection acquireWriter() throws SQLException {
    return pool.getConnection();
  }

  @Override
  public void releaseWriter(Connection c) {
    closeQuietly(c);
  }

  @Override
  public Connection acquireReader() throws SQLException {
    return pool.getConnection();
  }

  @Override
  public void releaseReader(Connection c) {
    closeQuietly(c);
  }

  @Override
  public void close() {
    pool.close();
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException ignored) {
      // Returning to the pool failed; Hikari evicts the connection itself.
    }
  }
}
