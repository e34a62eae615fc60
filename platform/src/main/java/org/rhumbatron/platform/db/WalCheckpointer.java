package org.rhumbatron.platform.db;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.rhumbatron.platform.concurrent.DaemonThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves SQLite's WAL checkpoints off the commit path: the writer's automatic checkpoint is off and
 * this connection runs a PASSIVE checkpoint twice a second, which never blocks the writer. PASSIVE
 * never moves the writer back to the start of the WAL, so under steady commits the log would grow
 * without end; once it holds {@link #RESTART_FRAMES} frames a RESTART checkpoint (which holds the
 * writer briefly) lets the next commit write from the start again. Figures: docs/benchmarks.md,
 * "Constants and the measurements behind them".
 */
final class WalCheckpointer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(WalCheckpointer.class);
  private static final long EVERY_MS = 500;

  /** About 64 MiB of 4 KiB pages: fewer restarts hold the writer less often. */
  static final int RESTART_FRAMES = 16_384;

  private static final long RESTART_READER_WAIT_MS = 20;
  private static final long CLOSE_WAIT_MS = 5_000;

  private final Connection connection;
  private final ScheduledExecutorService ticker;
  private final int restartFrames;
  private final Lock writerLock;

  /** {@code writerLock} is held by whoever has the write connection, for its whole transaction. */
  WalCheckpointer(String jdbcUrl, Lock writerLock) throws SQLException {
    this(jdbcUrl, writerLock, EVERY_MS, RESTART_FRAMES);
  }

  /** A checkpointer that ticks every {@code everyMs} and restarts at {@code restartFrames}. */
  WalCheckpointer(String jdbcUrl, Lock writerLock, long everyMs, int restartFrames)
      throws SQLException {
    this.connection = SqliteConnections.open(jdbcUrl);
    this.writerLock = writerLock;
    this.restartFrames = restartFrames;
    busyTimeout(RESTART_READER_WAIT_MS);
    this.ticker =
        Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("sqlite-checkpoint"));
    ticker.scheduleWithFixedDelay(this::tick, everyMs, everyMs, TimeUnit.MILLISECONDS);
  }

  /** Turns off the automatic checkpoint of {@code writer}; this class does it instead. */
  static void disableAutoCheckpoint(Connection writer) throws SQLException {
    try (Statement st = writer.createStatement()) {
      st.execute("PRAGMA wal_autocheckpoint = 0");
    }
  }

  private void tick() {
    if (checkpoint("PASSIVE") < restartFrames) {
      return;
    }
    // The RESTART holds SQLite's write lock while it copies what PASSIVE left and waits for the
    // readers still on the log. Taking the process's writer lock first means it never finds a
    // write transaction open, and the writers wait on that lock, woken the moment it is free,
    // instead of in SQLite's busy handler, which sleeps in steps of up to 100 ms. A RESTART that
    // still finds a reader after RESTART_READER_WAIT_MS gives up; the next tick tries again.
    writerLock.lock();
    try {
      checkpoint("RESTART");
    } finally {
      writerLock.unlock();
    }
  }

  /** Runs a checkpoint; returns the frames in the log before it ran, or -1 when it did not run. */
  private synchronized int checkpoint(String mode) {
    try (Statement st = connection.createStatement();
        ResultSet rs = st.executeQuery("PRAGMA wal_checkpoint(" + mode + ")")) {
      return rs.next() ? rs.getInt(2) : -1;
    } catch (SQLException e) {
      log.debug("WAL checkpoint ({}) did not run: {}", mode, e.getMessage());
      return -1;
    }
  }

  private void busyTimeout(long ms) throws SQLException {
    try (Statement st = connection.createStatement()) {
      st.execute("PRAGMA busy_timeout = " + ms);
    }
  }

  /** Stops the ticker and, once the writer is closed, empties the WAL into the database. */
  @Override
  public void close() {
    ticker.shutdownNow();
    try {
      ticker.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try (Connection closing = connection) {
      busyTimeout(CLOSE_WAIT_MS); // the last checkpoint waits for readers that still finish
      checkpoint("TRUNCATE");
    } catch (SQLException ignored) {
      // Closing: nothing left to do with the connection.
    }
  }
}
