package org.rhumbatron.testkit.db;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A database {@code rt_test_<epochSeconds>_<random>} created on the local PostgreSQL server; close
 * terminates its connections and drops it.
 */
final class PostgresTestDatabase implements TestDatabase {

  static final String HOST_PROPERTY = "rhumbatron.postgresHost";
  static final String PORT_PROPERTY = "rhumbatron.postgresPort";
  static final String REQUIRE_PROPERTY = "rhumbatron.requirePostgres";
  static final String DEFAULT_HOST = "127.0.0.1";
  static final int DEFAULT_PORT = 5432;
  static final String USER = "postgres";
  static final String PREFIX = "rt_test_";

  /** Databases left behind by a killed test JVM are dropped once they are this old. */
  private static final Duration LEFTOVER_AGE = Duration.ofHours(6);

  private static final Pattern NAME = Pattern.compile(PREFIX + "(\\d+)_[0-9a-f]+");
  private static final Logger log = LoggerFactory.getLogger(PostgresTestDatabase.class);

  /** The outcome of the first reachability probe; the server is probed once per JVM. */
  private static volatile String unreachableReason;

  private static volatile boolean probed;

  private final String name;

  private PostgresTestDatabase(String name) {
    this.name = name;
  }

  static String host() {
    return System.getProperty(HOST_PROPERTY, DEFAULT_HOST);
  }

  static int port() {
    return Integer.getInteger(PORT_PROPERTY, DEFAULT_PORT);
  }

  static String serverUrl(String database) {
    return "jdbc:postgresql://" + host() + ":" + port() + "/" + database;
  }

  /** True when the environment says PostgreSQL must be there: CI=true or the system property. */
  static boolean required() {
    return "true".equalsIgnoreCase(System.getenv("CI"))
        || Boolean.parseBoolean(System.getProperty(REQUIRE_PROPERTY));
  }

  /**
   * Null when the server answers; otherwise why not. Probed once per JVM, and leftover test
   * databases are dropped on the first successful probe.
   */
  static synchronized String unreachableReason() {
    if (!probed) {
      probed = true;
      try (Connection admin = admin()) {
        dropLeftovers(admin);
      } catch (SQLException e) {
        unreachableReason =
            "PostgreSQL is not reachable at "
                + host()
                + ":"
                + port()
                + " as user "
                + USER
                + ": "
                + e.getMessage();
      }
    }
    return unreachableReason;
  }

  static PostgresTestDatabase create() {
    String name =
        PREFIX
            + Instant.now().getEpochSecond()
            + "_"
            + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
    try (Connection admin = admin();
        Statement st = admin.createStatement()) {
      st.execute("CREATE DATABASE " + name);
    } catch (SQLException e) {
      throw new IllegalStateException("cannot create PostgreSQL database " + name, e);
    }
    return new PostgresTestDatabase(name);
  }

  private static Connection admin() throws SQLException {
    Properties props = new Properties();
    props.setProperty("user", USER);
    props.setProperty("connectTimeout", "3");
    props.setProperty("loginTimeout", "5");
    return DriverManager.getConnection(serverUrl("postgres"), props);
  }

  @Override
  public Kind kind() {
    return Kind.POSTGRES;
  }

  @Override
  public String url() {
    return serverUrl(name) + "?user=" + USER;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public void close() {
    try (Connection admin = admin()) {
      drop(admin, name);
    } catch (SQLException e) {
      throw new IllegalStateException("cannot drop PostgreSQL database " + name, e);
    }
  }

  private static void drop(Connection admin, String database) throws SQLException {
    try (PreparedStatement ps =
        admin.prepareStatement(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                + " WHERE datname = ? AND pid <> pg_backend_pid()")) {
      ps.setString(1, database);
      ps.executeQuery().close();
    }
    try (Statement st = admin.createStatement()) {
      // FORCE (PostgreSQL 13+) covers a connection that raced in after the terminate.
      st.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
    }
  }

  private static void dropLeftovers(Connection admin) throws SQLException {
    List<String> old = new ArrayList<>();
    long cutoff = Instant.now().minus(LEFTOVER_AGE).getEpochSecond();
    try (Statement st = admin.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT datname FROM pg_database WHERE datname LIKE '" + PREFIX + "%'")) {
      while (rs.next()) {
        Matcher m = NAME.matcher(rs.getString(1));
        if (m.matches() && Long.parseLong(m.group(1)) < cutoff) {
          old.add(m.group());
        }
      }
    }
    for (String database : old) {
      log.info("dropping leftover test database {}", database);
      drop(admin, database);
    }
  }

  @Override
  public String toString() {
    return "PostgreSQL " + name;
  }
}
