package org.rhumbatron.testkit.db;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/** A database made for one test (or one test class); closing it deletes it. */
public interface TestDatabase extends AutoCloseable {

  /** Which database engine. */
  enum Kind {
    SQLITE,
    POSTGRES
  }

  Kind kind();

  /**
   * The JDBC URL of the database ({@code jdbc:sqlite:/tmp/.../test.db} or {@code
   * jdbc:postgresql://127.0.0.1:5432/rt_test_...?user=postgres}); the platform's {@code
   * Database.open} accepts it as is.
   */
  String url();

  /** The file name (SQLite) or database name (PostgreSQL), for messages. */
  String name();

  /** A plain JDBC connection in auto-commit mode, for setting up and checking rows directly. */
  default Connection connect() throws SQLException {
    return DriverManager.getConnection(url());
  }

  /** Deletes the database: the file and its directory, or the PostgreSQL database. */
  @Override
  void close();
}
