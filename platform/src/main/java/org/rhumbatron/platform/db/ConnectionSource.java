package org.rhumbatron.platform.db;

import java.sql.Connection;
import java.sql.SQLException;

/** Where {@link Database} gets its connections: the SPI behind the facade, one per engine. */
interface ConnectionSource extends AutoCloseable {

  /** A connection for one write transaction; exclusive to the caller until released. */
  Connection acquireWriter() throws SQLException, InterruptedException;

  void releaseWriter(Connection c);

  /** A connection for one read; exclusive to the caller until released. */
  Connection acquireReader() throws SQLException, InterruptedException;

  void releaseReader(Connection c);

  /** The statement cache of a long-lived connection, or null when connections are pooled. */
  default StatementCache statements(Connection c) {
    return null;
  }

  @Override
  void close();
}
