package org.rhumbatron.platform.db;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;

/** How {@link Database#open(String, DatabaseOptions)} opens a database. */
public final class DatabaseOptions {

  /** How long SQLite itself waits for a lock before reporting SQLITE_BUSY to the layer. */
  public static final Duration DEFAULT_BUSY_TIMEOUT = Duration.ofSeconds(5);

  /** Read connections of a SQLite database (writes share the one writer connection). */
  public static final int DEFAULT_SQLITE_READERS = 4;

  /** Connections of the PostgreSQL pool. */
  public static final int DEFAULT_POSTGRES_POOL_SIZE = 10;

  /**
   * How long a PostgreSQL session may sit inside a transaction between statements before the server
   * ends it and rolls it back: the default lease of a core ({@code cluster.lease}), so a paused
   * core holds an actor's lock no longer than it would hold the actor's duties.
   */
  public static final Duration DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT = Duration.ofSeconds(15);

  /** Runs of one transaction before a transient error is given up on. */
  public static final int DEFAULT_MAX_ATTEMPTS = 50;

  /** Backoff after the first transient failure; it doubles up to {@link #DEFAULT_MAX_BACKOFF}. */
  public static final Duration DEFAULT_INITIAL_BACKOFF = Duration.ofMillis(1);

  public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofMillis(100);

  private final Clock clock;
  private final Duration busyTimeout;
  private final int sqliteReaders;
  private final int postgresPoolSize;
  private final Duration idleInTransactionTimeout;
  private final String applicationName;
  private final int maxAttempts;
  private final Duration initialBackoff;
  private final Duration maxBackoff;
  private final MigrationSource migrations;
  private final String password;

  private DatabaseOptions(Builder b) {
    this.clock = b.clock;
    this.busyTimeout = b.busyTimeout;
    this.sqliteReaders = b.sqliteReaders;
    this.postgresPoolSize = b.postgresPoolSize;
    this.idleInTransactionTimeout = b.idleInTransactionTimeout;
    this.applicationName = b.applicationName;
    this.maxAttempts = b.maxAttempts;
    this.initialBackoff = b.initialBackoff;
    this.maxBackoff = b.maxBackoff;
    this.migrations = b.migrations;
    this.password = b.password;
  }

  public static DatabaseOptions defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  public Clock clock() {
    return clock;
  }

  public Duration busyTimeout() {
    return busyTimeout;
  }

  public int sqliteReaders() {
    return sqliteReaders;
  }

  public int postgresPoolSize() {
    return postgresPoolSize;
  }

  /** PostgreSQL's {@code idle_in_transaction_session_timeout} on every pooled session. */
  public Duration idleInTransactionTimeout() {
    return idleInTransactionTimeout;
  }

  /**
   * The {@code application_name} of every PostgreSQL session this database opens (empty: the
   * driver's), so that the sessions of one process can be told apart and ended together.
   */
  public String applicationName() {
    return applicationName;
  }

  public int maxAttempts() {
    return maxAttempts;
  }

  public Duration initialBackoff() {
    return initialBackoff;
  }

  public Duration maxBackoff() {
    return maxBackoff;
  }

  public MigrationSource migrations() {
    return migrations;
  }

  /** The PostgreSQL password given apart from the URL; null: the URL's, or none. */
  String password() {
    return password;
  }

  @Override
  public String toString() {
    return "DatabaseOptions[clock="
        + clock
        + ", password="
        + (password == null ? "none" : "***")
        + "]";
  }

  /** Backoff before run {@code attempt + 1}: doubling from the initial value, capped, jittered. */
  Duration backoff(int attempt, double jitter) {
    long base = initialBackoff.toNanos() << Math.min(attempt - 1, 20);
    long capped = Math.min(base, maxBackoff.toNanos());
    // Jitter in [0.5, 1) keeps two processes that collided from colliding again in lockstep.
    return Duration.ofNanos((long) (capped * (0.5 + jitter / 2)));
  }

  public static final class Builder {
    private Clock clock = Clock.systemUTC();
    private Duration busyTimeout = DEFAULT_BUSY_TIMEOUT;
    private int sqliteReaders = DEFAULT_SQLITE_READERS;
    private int postgresPoolSize = DEFAULT_POSTGRES_POOL_SIZE;
    private Duration idleInTransactionTimeout = DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT;
    private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
    private Duration initialBackoff = DEFAULT_INITIAL_BACKOFF;
    private Duration maxBackoff = DEFAULT_MAX_BACKOFF;
    private MigrationSource migrations = Migrations.classpath(Migrations.DEFAULT_LOCATION);
    private String password;
    private String applicationName = "";

    private Builder() {}

    public Builder applicationName(String applicationName) {
      this.applicationName = Objects.requireNonNull(applicationName, "applicationName");
      return this;
    }

    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    public Builder busyTimeout(Duration busyTimeout) {
      this.busyTimeout = Objects.requireNonNull(busyTimeout, "busyTimeout");
      return this;
    }

    public Builder sqliteReaders(int sqliteReaders) {
      this.sqliteReaders = sqliteReaders;
      return this;
    }

    public Builder postgresPoolSize(int postgresPoolSize) {
      this.postgresPoolSize = postgresPoolSize;
      return this;
    }

    public Builder idleInTransactionTimeout(Duration idleInTransactionTimeout) {
      this.idleInTransactionTimeout =
          Objects.requireNonNull(idleInTransactionTimeout, "idleInTransactionTimeout");
      return this;
    }

    /** The PostgreSQL password, kept out of the JDBC URL; null or empty: none given here. */
    public Builder password(String password) {
      this.password = password == null || password.isEmpty() ? null : password;
      return this;
    }

    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    public Builder backoff(Duration initial, Duration max) {
      this.initialBackoff = Objects.requireNonNull(initial, "initialBackoff");
      this.maxBackoff = Objects.requireNonNull(max, "maxBackoff");
      return this;
    }

    public Builder migrations(MigrationSource migrations) {
      this.migrations = Objects.requireNonNull(migrations, "migrations");
      return this;
    }

    public DatabaseOptions build() {
      check(!busyTimeout.isNegative(), "busyTimeout", "must not be negative", busyTimeout);
      check(sqliteReaders >= 1, "sqliteReaders", "must be at least 1", sqliteReaders);
      check(postgresPoolSize >= 1, "postgresPoolSize", "must be at least 1", postgresPoolSize);
      check(
          idleInTransactionTimeout.toMillis() >= 1,
          "idleInTransactionTimeout",
          "must be at least 1 ms",
          idleInTransactionTimeout);
      check(maxAttempts >= 1, "maxAttempts", "must be at least 1", maxAttempts);
      check(!initialBackoff.isNegative(), "initialBackoff", "must not be negative", initialBackoff);
      check(
          maxBackoff.compareTo(initialBackoff) >= 0,
          "maxBackoff",
          "must be at least initialBackoff " + initialBackoff,
          maxBackoff);
      return new DatabaseOptions(this);
    }

    private static void check(boolean ok, String field, String rule, Object value) {
      if (!ok) {
        throw new IllegalArgumentException(field + " " + rule + ", was " + value);
      }
    }
  }
}
