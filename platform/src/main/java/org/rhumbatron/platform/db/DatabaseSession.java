package org.rhumbatron.platform.db;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * One PostgreSQL session kept open by its owner ({@link Database#openSession}), for what must live
 * with the process: a session-level advisory lock that the server releases when the process dies.
 * Its transactions run one at a time on the owner's thread, once each (no retry: a broken session
 * is the owner's to notice and replace).
 */
public final class DatabaseSession implements AutoCloseable {
  private final Connection connection;
  private final TxRunner runner;

  DatabaseSession(Connection connection, TxRunner runner) {
    this.connection = connection;
    this.runner = runner;
  }

  /**
   * Runs {@code work} in one transaction on this connection and commits it.
   *
   * @throws DatabaseException on an SQL error, also when the session was ended by the server
   */
  public <T> T inTransaction(TxWork<T> work) {
    return runner.runOnceOn(connection, work);
  }

  /** Whether the session still answers (the server may have ended it). */
  public boolean isOpen() {
    try {
      return !connection.isClosed() && connection.isValid(2);
    } catch (SQLException e) {
      return false;
    }
  }

  @Override
  public void close() {
    try {
      connection.close();
    } catch (SQLException ignored) {
      // The session is gone either way.
    }
  }
}
