package org.rhumbatron.workload;

import java.io.PrintStream;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.util.HexFormat;

/** The demo's {@code --db}: its forms, and the fresh database of {@code --db postgres}. */
final class DemoDatabase {
  /** The local PostgreSQL server of {@code --db postgres}: trust authentication, user postgres. */
  static final String LOCAL_POSTGRES = "jdbc:postgresql://127.0.0.1:5432/";

  static final String LOCAL_POSTGRES_USER = "postgres";

  private DemoDatabase() {}

  /** {@code sqlite}, {@code postgres} or a JDBC URL; anything else is one line naming the forms. */
  static void check(String spec) {
    if (spec.equals("sqlite")
        || spec.equals("postgres")
        || spec.startsWith("jdbc:sqlite:")
        || spec.startsWith("jdbc:postgresql:")) {
      return;
    }
    throw new IllegalArgumentException(
        "--db must be sqlite, postgres, jdbc:sqlite:PATH or jdbc:postgresql://HOST/DB, got "
            + spec);
  }

  /** The database URL core gets for a {@code --db} other than postgres: null is its default. */
  static String given(String spec) {
    return spec.equals("sqlite") ? null : spec;
  }

  /** The URL of the local database {@code name}. */
  static String url(String name) {
    return LOCAL_POSTGRES + name + "?user=" + LOCAL_POSTGRES_USER;
  }

  /** A fresh database on the local server; its name says it is a demo's and when it was made. */
  static String create(Clock clock) throws SQLException {
    byte[] suffix = new byte[3];
    new SecureRandom().nextBytes(suffix);
    String name =
        "rhumbatron_demo_"
            + Long.toString(clock.millis(), 36)
            + "_"
            + HexFormat.of().formatHex(suffix);
    try (Connection c = localServer();
        Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE " + name);
    } catch (SQLException e) {
      throw new IllegalStateException(
          "--db postgres: cannot create a database on "
              + LOCAL_POSTGRES
              + " as user "
              + LOCAL_POSTGRES_USER
              + ": "
              + e.getMessage(),
          e);
    }
    return name;
  }

  static void drop(String name, PrintStream out) {
    try (Connection c = localServer();
        Statement st = c.createStatement()) {
      st.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    } catch (SQLException e) {
      out.println("rhumbatron demo: could not drop database " + name + ": " + e.getMessage());
    }
  }

  private static Connection localServer() throws SQLException {
    return DriverManager.getConnection(LOCAL_POSTGRES + "postgres?user=" + LOCAL_POSTGRES_USER);
  }
}
