package org.rhumbatron.platform.db;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one unit of work in a transaction on a connection of its kind, and again with backoff after
 * a transient error; the {@link Tx} of the running work is this thread's current one.
 */
final class TxRunner {
  private static final Logger log = LoggerFactory.getLogger(Database.class);

  private final String url;
  private final Dialect dialect;
  private final ConnectionSource connections;
  private final DatabaseOptions options;
  private final ThreadLocal<Tx> current = new ThreadLocal<>();
  private final LongAdder transientRetries = new LongAdder();

  TxRunner(String url, Dialect dialect, ConnectionSource connections, DatabaseOptions options) {
    this.url = url;
    this.dialect = dialect;
    this.connections = connections;
    this.options = options;
  }

  /** The transaction this thread runs work in, or null. */
  Tx current() {
    return current.get();
  }

  long transientRetries() {
    return transientRetries.sum();
  }

  <T> T run(boolean write, TxWork<T> work) {
    for (int attempt = 1; ; attempt++) {
      try {
        return attemptOnce(write, work);
      } catch (TransientFailure f) {
        if (attempt >= options.maxAttempts()) {
          throw new DatabaseException(
              "gave up after "
                  + attempt
                  + " attempts on a transient error in "
                  + url
                  + ": "
                  + SqlErrors.describe(f.cause),
              f.cause);
        }
        transientRetries.increment();
        log.debug("transient error on {} (attempt {}): {}", url, attempt, f.cause.getMessage());
        pause(options.backoff(attempt, ThreadLocalRandom.current().nextDouble()));
      }
    }
  }

  /**
   * Runs {@code work} once in a write transaction on {@code c}, a connection the caller keeps; a
   * transient error is not retried here.
   */
  <T> T runOnceOn(Connection c, TxWork<T> work) {
    try {
      return runIn(c, true, work);
    } catch (TransientFailure f) {
      throw failure(f.cause);
    }
  }

  private <T> T attemptOnce(boolean write, TxWork<T> work) {
    Connection c = acquire(write);
    try {
      return runIn(c, write, work);
    } finally {
      if (write) {
        connections.releaseWriter(c);
      } else {
        connections.releaseReader(c);
      }
    }
  }

  private <T> T runIn(Connection c, boolean write, TxWork<T> work) {
    boolean begun = false;
    try {
      if (write) {
        dialect.beginWrite(c);
      } else {
        dialect.beginRead(c);
      }
      begun = true;
      T result;
      current.set(new Tx(c, dialect, connections.statements(c)));
      try {
        result = work.run(current.get());
      } finally {
        current.remove();
      }
      if (write) {
        dialect.commit(c);
      } else {
        dialect.endRead(c);
      }
      return result;
    } catch (SQLException e) {
      if (begun) {
        rollbackQuietly(c, write, e);
      }
      if (dialect.isTransient(e)) {
        throw new TransientFailure(e);
      }
      throw failure(e);
    } catch (RuntimeException | Error e) {
      if (begun) {
        rollbackQuietly(c, write, e);
      }
      // A transient SQLException that the work wrapped (or a nested read reported) still retries.
      SQLException transientCause = transientCause(e);
      if (transientCause != null) {
        throw new TransientFailure(transientCause);
      }
      throw e;
    }
  }

  SQLException transientCause(Throwable e) {
    for (Throwable t = e.getCause(); t != null && t != t.getCause(); t = t.getCause()) {
      if (t instanceof SQLException s && dialect.isTransient(s)) {
        return s;
      }
    }
    return null;
  }

  private Connection acquire(boolean write) {
    try {
      return write ? connections.acquireWriter() : connections.acquireReader();
    } catch (SQLException e) {
      if (dialect.isTransient(e)) {
        throw new TransientFailure(e);
      }
      throw new DatabaseException("no connection to " + url + ": " + SqlErrors.describe(e), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DatabaseException("interrupted while waiting for a connection to " + url, e);
    }
  }

  private void rollbackQuietly(Connection c, boolean write, Throwable cause) {
    try {
      if (write) {
        dialect.rollback(c);
      } else {
        dialect.endRead(c);
      }
    } catch (SQLException e) {
      // A failed COMMIT may already have ended the transaction; keep the first error.
      cause.addSuppressed(e);
    }
  }

  DatabaseException failure(SQLException e) {
    return new DatabaseException("SQL error on " + url + ": " + SqlErrors.describe(e), e);
  }

  private static void pause(Duration d) {
    try {
      Thread.sleep(d.toMillis(), (int) (d.toNanos() % 1_000_000));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DatabaseException("interrupted while backing off a transient error", e);
    }
  }

  /** Internal signal: the attempt hit a transient error and was rolled back. */
  private static final class TransientFailure extends RuntimeException {
    final SQLException cause;

    TransientFailure(SQLException cause) {
      super(null, cause, false, false);
      this.cause = cause;
    }
  }
}
