package org.rhumbatron.platform.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;

/** A HikariCP pool; writers and readers are the same kind of pooled connection. */
final class PostgresConnections implements ConnectionSource {

  private final HikariDataSource pool;

  private final DatabaseUrl url;
  private final java.time.Duration idleInTransaction;
  private final String password;
  private final String applicationName;

  PostgresConnections(
      DatabaseUrl url,
      int poolSize,
      java.time.Duration idleInTransaction,
      String password,
      String applicationName) {
    this.url = url;
    this.idleInTransaction = idleInTransaction;
    this.password = password;
    this.applicationName = applicationName;
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
    if (!applicationName.isEmpty()) {
      config.addDataSourceProperty("ApplicationName", applicationName);
    }
    config.setConnectionInitSql(
        "SET idle_in_transaction_session_timeout = " + idleInTransaction.toMillis());
    // Fail at open, with the driver's reason, rather than at the first transaction.
    config.setInitializationFailTimeout(1);
    this.pool = new HikariDataSource(config);
  }

  /**
   * A connection of its own, outside the pool, set up like the pooled ones: for a session that must
   * live as long as the process (its session-level locks go with it).
   */
  Connection openDedicated(String name) throws SQLException {
    java.util.Properties props = new java.util.Properties();
    props.setProperty("ApplicationName", name);
    if (password != null) {
      props.setProperty("password", password);
    }
    Connection c = java.sql.DriverManager.getConnection(url.jdbcUrl(), props);
    try (java.sql.Statement s = c.createStatement()) {
      s.execute("SET idle_in_transaction_session_timeout = " + idleInTransaction.toMillis());
    } catch (SQLException e) {
      c.close();
      throw e;
    }
    c.setAutoCommit(true);
    return c;
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
