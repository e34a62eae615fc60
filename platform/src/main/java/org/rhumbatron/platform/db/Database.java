package org.rhumbatron.platform.db;

import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The one entry point to the database: SQLite by default, PostgreSQL by URL, the same schema and
 * SQL, migrations applied at open.
 *
 * <pre>{@code
 * try (Database db = Database.open("data/rhumbatron.db")) {
 *   int fresh = db.inTransaction(tx -> tx.update(
 *       tx.dialect().insertIgnore("processed_events", "consumer", "event_id", "processed_at_ms"),
 *       "causal-router", eventId, now));
 * }
 * }</pre>
 *
 * <p>Transient errors (SQLite busy/locked, PostgreSQL 40001/40P01) roll the transaction back and
 * run the work again with backoff, so a {@link TxWork} may run more than once. Other SQL errors
 * become a {@link DatabaseException}; an unchecked exception from the work rolls back and is
 * rethrown unchanged. Thread-safe.
 */
public final class Database implements AutoCloseable {

  private final String url;
  private final Dialect dialect;
  private final ConnectionSource connections;
  private final DatabaseOptions options;
  private final TxRunner runner;
  private final GroupCommit groupCommit;

  private Database(
      String url, Dialect dialect, ConnectionSource connections, DatabaseOptions options) {
    this.url = url;
    this.dialect = dialect;
    this.connections = connections;
    this.options = options;
    this.runner = new TxRunner(url, dialect, connections, options);
    this.groupCommit = dialect instanceof SqliteDialect ? new GroupCommit(this, url) : null;
  }

  /**
   * The file of a SQLite {@code urlOrPath}, empty for PostgreSQL.
   *
   * @throws DatabaseException naming the URL when it is none of those {@link #open} takes
   */
  public static java.util.Optional<java.nio.file.Path> sqliteFile(String urlOrPath) {
    return java.util.Optional.ofNullable(DatabaseUrl.parse(urlOrPath).file());
  }

  /**
   * Opens a database with default options and applies the shipped migrations.
   *
   * @param urlOrPath a file path or {@code jdbc:sqlite:<path>} (SQLite), or {@code
   *     jdbc:postgresql://host[:port]/db[?user=...]} (PostgreSQL)
   * @throws DatabaseException naming the URL when it is not one of these, the database cannot be
   *     reached, or a migration fails
   */
  public static Database open(String urlOrPath) {
    return open(urlOrPath, DatabaseOptions.defaults());
  }

  public static Database open(String urlOrPath, DatabaseOptions options) {
    DatabaseUrl target = DatabaseUrl.parse(urlOrPath);
    String shown = DatabaseUrl.redact(target.jdbcUrl());
    ConnectionSource connections;
    try {
      connections =
          target.dialect() instanceof SqliteDialect
              ? new SqliteConnections(target, options.busyTimeout(), options.sqliteReaders())
              : new PostgresConnections(
                  target,
                  options.postgresPoolSize(),
                  options.idleInTransactionTimeout(),
                  options.password(),
                  options.applicationName());
    } catch (SQLException e) {
      throw new DatabaseException("cannot open " + shown + ": " + SqlErrors.describe(e), e);
    } catch (RuntimeException e) {
      // HikariCP reports a failed first connection as its own unchecked exception.
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      throw new DatabaseException("cannot open " + shown + ": " + cause.getMessage(), e);
    }
    Database db = new Database(shown, target.dialect(), connections, options);
    try {
      FlywayMigrator.apply(db, target, options);
    } catch (RuntimeException e) {
      db.close();
      throw e;
    }
    return db;
  }

  /**
   * Runs {@code work} in one write transaction and commits it. On SQLite the transaction starts
   * with BEGIN IMMEDIATE on the single writer connection, so writers queue in the JVM instead of
   * failing. The work may run again after a transient error: see {@link TxWork}.
   *
   * @throws IllegalStateException when called inside another transaction of this database on the
   *     same thread (pass the {@link Tx} down instead)
   */
  public <T> T inTransaction(TxWork<T> work) {
    if (runner.current() != null) {
      throw new IllegalStateException(
          "inTransaction called inside a transaction of the same database; pass the Tx down");
    }
    if (groupCommit != null) {
      return groupCommit.submit(work);
    }
    return runner.run(true, work);
  }

  /**
   * {@link #inTransaction} without waiting: the future completes when the work committed, or with
   * the exception {@code inTransaction} would throw. On SQLite the work joins the next group commit
   * and the future completes on the thread that led it, so what depends on the future must not
   * block (it may queue more work). On PostgreSQL the work runs now, on the calling thread.
   *
   * @throws IllegalStateException when called inside another transaction of this database on the
   *     same thread
   */
  public <T> CompletableFuture<T> inTransactionAsync(TxWork<T> work) {
    if (runner.current() != null) {
      throw new IllegalStateException(
          "inTransactionAsync called inside a transaction of the same database; pass the Tx down");
    }
    if (groupCommit != null) {
      return groupCommit.submitAsync(work);
    }
    try {
      return CompletableFuture.completedFuture(runner.run(true, work));
    } catch (RuntimeException | Error e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Whether {@link #inTransactionAsync} only queues the work, and queued work commits in the order
   * it was queued, each piece seeing the writes of the ones before it (SQLite's group commit).
   */
  public boolean commitsInQueueOrder() {
    return groupCommit != null;
  }

  /**
   * Runs several callers' write work in one transaction, so that the whole batch commits once
   * (group commit); one caller's exception undoes only its own writes (see {@link #runMembers}).
   * The batch reruns as a whole after a transient error.
   */
  void runBatch(List<GroupCommit.Pending<?>> batch) {
    try {
      if (!runMembers(batch, false)) {
        runMembers(batch, true);
      }
    } catch (RuntimeException | Error e) {
      batch.forEach(p -> p.fail(e));
      return;
    }
    batch.forEach(GroupCommit.Pending::publish);
  }

  /**
   * One attempt at the batch. Without savepoints (the first try: a savepoint and its release cost
   * each member two statements, a third of a small write) a member that fails rolls back the whole
   * batch and this returns false, so that the batch runs again with a savepoint per member, and the
   * failing member's exception is its own. A lone member needs no savepoint: its failure is the
   * transaction's.
   */
  private boolean runMembers(List<GroupCommit.Pending<?>> batch, boolean savepoints) {
    try {
      runner.run(
          true,
          tx -> {
            for (GroupCommit.Pending<?> p : batch) {
              p.reset();
              if (savepoints) {
                tx.update("SAVEPOINT member");
              }
              try {
                p.run(tx);
                if (savepoints) {
                  tx.update("RELEASE member");
                }
              } catch (SQLException | RuntimeException e) {
                SQLException transientCause =
                    e instanceof SQLException s && dialect.isTransient(s)
                        ? s
                        : runner.transientCause(e);
                if (transientCause != null) {
                  throw transientCause; // the whole batch rolls back and runs again
                }
                if (!savepoints) {
                  if (batch.size() == 1) {
                    throw e;
                  }
                  throw MemberFailed.SIGNAL;
                }
                try (Statement st = tx.connection().createStatement()) {
                  st.execute("ROLLBACK TO member");
                  st.execute("RELEASE member");
                }
                p.memberFailed(e instanceof SQLException s ? runner.failure(s) : e);
              }
            }
            return null;
          });
      return true;
    } catch (MemberFailed f) {
      return false;
    }
  }

  /** Internal signal: a member of a batch run without savepoints failed; it was rolled back. */
  private static final class MemberFailed extends RuntimeException {
    static final MemberFailed SIGNAL = new MemberFailed();

    private MemberFailed() {
      super("a member of a group commit failed", null, false, false);
    }
  }

  /**
   * Runs {@code work} on a read connection (SQLite: a read-only connection in one read transaction,
   * so it sees one snapshot). Inside {@link #inTransaction} on the same thread it joins that
   * transaction and sees its uncommitted writes. The work must not write.
   */
  public <T> T read(TxWork<T> work) {
    Tx tx = runner.current();
    if (tx != null) {
      try {
        return work.run(tx);
      } catch (SQLException e) {
        throw runner.failure(e);
      }
    }
    return runner.run(false, work);
  }

  /**
   * Opens a PostgreSQL session of its own, outside the pool: its session-level advisory locks last
   * until {@link DatabaseSession#close} or until the process dies, when the server ends the session
   * and releases them.
   *
   * @param applicationName the session's {@code application_name}
   * @throws DatabaseException when the database is SQLite or cannot be reached
   */
  public DatabaseSession openSession(String applicationName) {
    if (!(connections instanceof PostgresConnections postgres)) {
      throw new DatabaseException("a session of its own needs PostgreSQL, not " + url);
    }
    try {
      return new DatabaseSession(postgres.openDedicated(applicationName), runner);
    } catch (SQLException e) {
      throw new DatabaseException(
          "cannot open a session on " + url + ": " + SqlErrors.describe(e), e);
    }
  }

  public Dialect dialect() {
    return dialect;
  }

  /** The clock of this database's timestamps. */
  public Clock clock() {
    return options.clock();
  }

  /** The JDBC URL without passwords. */
  public String url() {
    return url;
  }

  /** How many times a transaction was rerun after a transient error, since open. */
  public long transientRetries() {
    return runner.transientRetries();
  }

  /** Write work queued for SQLite's group commit and not yet taken into a transaction. */
  public int queuedWrites() {
    return groupCommit == null ? 0 : groupCommit.queued();
  }

  /** How many write transactions committed more than one caller's work (SQLite group commit). */
  public long groupCommits() {
    return groupCommit == null ? 0 : groupCommit.groupCommits();
  }

  @Override
  public void close() {
    if (groupCommit != null) {
      groupCommit.close();
    }
    connections.close();
  }

  @Override
  public String toString() {
    return "Database[" + url + "]";
  }
}
