package org.rhumbatron.platform.db;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.sqlite.SQLiteConfig;

/**
 * One writer connection behind a fair lock plus a fixed pool of read-only connections. SQLite runs
 * one write transaction at a time per file anyway, so serializing writers in the JVM costs nothing
 * and keeps SQLITE_BUSY to the rare case of a second process on the same file.
 *
 * <p>Group commit (several callers' work in one COMMIT, led by a waiting caller or by the
 * database's writer thread) sits above this class, in {@link GroupCommit}; whoever leads a batch
 * holds the lock for its transaction.
 */
final class SqliteConnections implements ConnectionSource {

  private static final long READER_WAIT_SECONDS = 30;

  private final String jdbcUrl;
  private final ReentrantLock writerLock = new ReentrantLock(true);
  private final Connection writer;
  private final BlockingQueue<Connection> readers;
  private final java.util.Map<Connection, StatementCache> caches =
      new java.util.concurrent.ConcurrentHashMap<>();
  private volatile boolean closed;
  private final WalCheckpointer checkpointer;

  SqliteConnections(DatabaseUrl url, Duration busyTimeout, int readerCount) throws SQLException {
    this.jdbcUrl = url.jdbcUrl();
    createParentDirectory(url.file());
    this.readers = new ArrayBlockingQueue<>(readerCount);
    this.writer = open(jdbcUrl);
    List<Connection> allReaders = new ArrayList<>();
    WalCheckpointer started = null;
    try {
      configure(writer, busyTimeout, false);
      WalCheckpointer.disableAutoCheckpoint(writer);
      started = new WalCheckpointer(jdbcUrl, writerLock);
      for (int i = 0; i < readerCount; i++) {
        Connection r = open(jdbcUrl);
        allReaders.add(r);
        configure(r, busyTimeout, true);
        readers.add(r);
      }
    } catch (SQLException | RuntimeException e) {
      if (started != null) {
        started.close();
      }
      closeQuietly(writer);
      allReaders.forEach(SqliteConnections::closeQuietly);
      throw e;
    }
    this.checkpointer = started;
  }

  /**
   * Opens a connection without the driver's generated keys: by default it runs {@code SELECT
   * last_insert_rowid()} as a new statement after every INSERT, a tenth of the writer's time on the
   * outbox benchmark, for keys this code never asks for.
   */
  static Connection open(String jdbcUrl) throws SQLException {
    Properties properties = new Properties();
    properties.setProperty(SQLiteConfig.Pragma.JDBC_GET_GENERATED_KEYS.getPragmaName(), "false");
    return DriverManager.getConnection(jdbcUrl, properties);
  }

  private static void createParentDirectory(Path file) throws SQLException {
    try {
      Path parent = file.getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
    } catch (IOException e) {
      throw new SQLException("cannot create the directory of " + file + ": " + e.getMessage(), e);
    }
  }

  private static void configure(Connection c, Duration busyTimeout, boolean readOnly)
      throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute("PRAGMA busy_timeout = " + busyTimeout.toMillis());
      if (!readOnly) {
        // WAL is persistent in the file; readers find it set by the writer.
        String mode = walMode(st, busyTimeout);
        if (!"wal".equalsIgnoreCase(mode)) {
          throw new SQLException("SQLite refused WAL mode (journal_mode is " + mode + ")");
        }
        // The writer's savepoint journals in memory: the router's group commits (a savepoint per
        // member) spilled them to temp files, 6.7 pwrites per applied event on bench router. Its
        // sorts (CREATE INDEX in a migration) then use memory too; readers keep temp files.
        st.execute("PRAGMA temp_store = MEMORY");
      }
      st.execute("PRAGMA synchronous = NORMAL");
      st.execute("PRAGMA foreign_keys = ON");
      if (readOnly) {
        st.execute("PRAGMA query_only = ON");
      }
    }
  }

  /**
   * Sets WAL mode, waiting up to {@code busyTimeout} while another process opens the same new file:
   * the switch needs the file alone and SQLite reports BUSY then without its busy handler.
   */
  private static String walMode(Statement st, Duration busyTimeout) throws SQLException {
    long deadline = System.nanoTime() + busyTimeout.toNanos();
    for (int attempt = 1; ; attempt++) {
      try (ResultSet rs = st.executeQuery("PRAGMA journal_mode = WAL")) {
        return rs.next() ? rs.getString(1) : "?";
      } catch (SQLException e) {
        if (!SqliteDialect.INSTANCE.isTransient(e) || System.nanoTime() - deadline > 0) {
          throw e;
        }
        LockSupport.parkNanos(Duration.ofMillis(Math.min(attempt, 20)).toNanos());
      }
    }
  }

  @Override
  public Connection acquireWriter() throws SQLException, InterruptedException {
    writerLock.lockInterruptibly();
    if (closed) {
      writerLock.unlock();
      throw new SQLException("database is closed: " + jdbcUrl);
    }
    return writer;
  }

  @Override
  public void releaseWriter(Connection c) {
    writerLock.unlock();
  }

  @Override
  public Connection acquireReader() throws SQLException, InterruptedException {
    if (closed) {
      throw new SQLException("database is closed: " + jdbcUrl);
    }
    Connection c = readers.poll(READER_WAIT_SECONDS, TimeUnit.SECONDS);
    if (c == null) {
      throw new SQLException(
          "no SQLite read connection free after " + READER_WAIT_SECONDS + " s: " + jdbcUrl);
    }
    return c;
  }

  @Override
  public void releaseReader(Connection c) {
    if (closed) {
      closeQuietly(c);
    } else {
      readers.add(c);
    }
  }

  @Override
  public StatementCache statements(Connection c) {
    return caches.computeIfAbsent(c, StatementCache::new);
  }

  @Override
  public void close() {
    closed = true;
    writerLock.lock();
    try {
      closeQuietly(writer);
    } finally {
      writerLock.unlock();
    }
    // Readers in use are closed when they come back.
    Connection r;
    while ((r = readers.poll()) != null) {
      closeQuietly(r);
    }
    checkpointer.close();
  }

  private static void closeQuietly(Connection c) {
    if (c == null) {
      return;
    }
    try {
      c.close();
    } catch (SQLException ignored) {
      // Closing: nothing left to do with the connection.
    }
  }
}
