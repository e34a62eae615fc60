package org.rhumbatron.platform.db;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Group commit for SQLite's single writer: callers queue their work; whoever takes the leader lock
 * runs everything queued in one transaction and commits once, then wakes the others (a member that
 * fails makes the batch run again with a savepoint per member: {@code Database.runBatch}). SQLite
 * writes are serial anyway, so this turns many small commits into few larger ones without changing
 * what each caller sees: its work commits, or it gets its own exception.
 *
 * <p>A caller that waits ({@link #submit}) may lead the batch itself. A caller that does not wait
 * ({@link #submitAsync}) only queues: the writer thread leads for it and completes its future after
 * the commit, outside the leader lock, so that what depends on the future (an actor's next
 * transaction) queues its work at once without a thread of its own parked on the commit.
 */
final class GroupCommit implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(GroupCommit.class);

  /** Enough to amortize a commit; small enough that one batch stays a few milliseconds. */
  static final int MAX_BATCH = 128;

  private static final long PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  /** A leader with fewer members than this waits up to GATHER_NANOS for more. */
  static final int GATHER_MEMBERS = 8;

  static final long GATHER_NANOS = TimeUnit.MICROSECONDS.toNanos(100);

  private final Database database;
  private final ConcurrentLinkedQueue<Pending<?>> queue = new ConcurrentLinkedQueue<>();
  private final ReentrantLock leader = new ReentrantLock();
  private final LongAdder groupCommits = new LongAdder();
  private final AtomicBoolean writerParked = new AtomicBoolean();
  private final Thread writer;
  private volatile boolean closed;
  private int lastBatchSize; // read and written only by the leader, under the leader lock

  GroupCommit(Database database, String name) {
    this.database = database;
    this.writer = new Thread(this::writeLoop, "sqlite-writer " + name);
    this.writer.setDaemon(true);
    this.writer.start();
  }

  /** Runs {@code work} in the next batch and waits for its commit. */
  <T> T submit(TxWork<T> work) {
    Pending<T> mine = new Pending<>(work, null);
    enqueue(mine);
    while (!mine.isDone()) {
      if (leader.tryLock()) {
        List<Pending<?>> batch;
        try {
          batch = mine.isDone() ? List.of() : lead();
        } finally {
          leader.unlock();
        }
        completeAsync(batch);
        // Hand leadership on: the oldest waiter leads the next batch, or the writer thread when
        // the oldest member does not wait.
        Pending<?> next = queue.peek();
        if (next != null) {
          if (next.waiter != null) {
            LockSupport.unpark(next.waiter);
          } else {
            wakeWriter();
          }
        }
      } else {
        // Parked until our batch committed or the leader hands on; the timeout is a safety net.
        LockSupport.parkNanos(this, PARK_NANOS);
        if (Thread.interrupted()) {
          Thread.currentThread().interrupt();
          throw new DatabaseException("interrupted while waiting for a group commit");
        }
      }
    }
    return mine.get();
  }

  /**
   * Queues {@code work} for the next batch and returns at once. The future completes after the
   * commit (or with the work's own exception), on the thread that led the batch.
   */
  <T> CompletableFuture<T> submitAsync(TxWork<T> work) {
    Pending<T> mine = new Pending<>(work, new CompletableFuture<>());
    enqueue(mine);
    wakeWriter();
    return mine.future;
  }

  private void enqueue(Pending<?> p) {
    queue.add(p);
    if (closed && queue.remove(p)) {
      throw new DatabaseException("database is closed: " + database.url());
    }
  }

  private void wakeWriter() {
    if (writerParked.get() && writerParked.compareAndSet(true, false)) {
      LockSupport.unpark(writer);
    }
  }

  /** The writer thread: leads a batch whenever work is queued and no one else leads it. */
  private void writeLoop() {
    while (!closed) {
      if (queue.isEmpty()) {
        writerParked.set(true);
        if (queue.isEmpty() && !closed) {
          LockSupport.park(this);
        }
        writerParked.set(false);
        Thread.interrupted(); // close() may interrupt; the loop checks closed
        continue;
      }
      try {
        List<Pending<?>> batch;
        leader.lock();
        try {
          batch = lead();
        } finally {
          leader.unlock();
        }
        completeAsync(batch);
      } catch (RuntimeException | Error e) {
        // runBatch hands every failure to the members; this is what escaped it (out of memory):
        // the thread must stay, or no async work would commit again.
        log.error("the writer thread of {} survived an error: {}", database.url(), e.toString());
      }
    }
  }

  private List<Pending<?>> lead() {
    List<Pending<?>> batch = new ArrayList<>();
    Pending<?> next;
    // Only under concurrency (the last batch had company) does a small batch wait a moment for
    // the writers about to queue, so that more members share one commit's page writes; a lone
    // writer never waits. Yield, not spin: on two cores a spinner takes the core they need.
    boolean gather = lastBatchSize > 1;
    long gatherUntil = System.nanoTime() + GATHER_NANOS;
    while (batch.size() < MAX_BATCH) {
      next = queue.poll();
      if (next != null) {
        batch.add(next);
      } else if (gather && batch.size() < GATHER_MEMBERS && System.nanoTime() < gatherUntil) {
        Thread.yield();
      } else {
        break;
      }
    }
    if (batch.isEmpty()) {
      return batch;
    }
    lastBatchSize = batch.size();
    if (batch.size() > 1) {
      groupCommits.increment();
    }
    database.runBatch(batch);
    return batch;
  }

  /** Completes the futures of the batch's non-waiting members: after the leader lock is free. */
  private static void completeAsync(List<Pending<?>> batch) {
    for (Pending<?> p : batch) {
      if (p.future != null) {
        p.completeFuture();
      }
    }
  }

  int queued() {
    return queue.size();
  }

  long groupCommits() {
    return groupCommits.sum();
  }

  /** Stops the writer thread; work still queued fails with "database is closed". */
  @Override
  public void close() {
    closed = true;
    LockSupport.unpark(writer);
    try {
      writer.join(TimeUnit.SECONDS.toMillis(10));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    DatabaseException gone = new DatabaseException("database is closed: " + database.url());
    Pending<?> left;
    while ((left = queue.poll()) != null) {
      left.fail(gone);
      if (left.future != null) {
        left.completeFuture();
      }
    }
  }

  /** One caller's work in a batch, and its outcome once the batch committed (or failed). */
  static final class Pending<T> {
    private final TxWork<T> work;
    private final CompletableFuture<T> future; // null: the caller waits on its thread
    private final Thread waiter;
    private final CountDownLatch done = new CountDownLatch(1);
    private T result;
    private Throwable failure;
    private boolean ran;

    Pending(TxWork<T> work, CompletableFuture<T> future) {
      this.work = work;
      this.future = future;
      this.waiter = future == null ? Thread.currentThread() : null;
    }

    void reset() {
      result = null;
      failure = null;
      ran = false;
    }

    void run(Tx tx) throws SQLException {
      result = work.run(tx);
      ran = true;
    }

    /** This member failed on its own; its savepoint rolled back. Reported after the batch. */
    void memberFailed(Throwable e) {
      failure = e;
    }

    /** The whole batch failed: every member gets the error. */
    void fail(Throwable e) {
      if (done.getCount() == 0) {
        return;
      }
      failure = e;
      done.countDown();
      if (waiter != null) {
        LockSupport.unpark(waiter);
      }
    }

    /** The batch committed: members that ran successfully complete with their result. */
    void publish() {
      if (done.getCount() == 0) {
        return;
      }
      if (!ran && failure == null) {
        failure = new IllegalStateException("work was not run in its batch");
      }
      done.countDown();
      if (waiter != null) {
        LockSupport.unpark(waiter);
      }
    }

    boolean isDone() {
      return done.getCount() == 0;
    }

    void completeFuture() {
      try {
        future.complete(get());
      } catch (RuntimeException | Error e) {
        future.completeExceptionally(e);
      }
    }

    T get() {
      if (failure instanceof RuntimeException r) {
        throw r;
      }
      if (failure instanceof Error err) {
        throw err;
      }
      if (failure != null) {
        throw new DatabaseException("write failed: " + failure, failure);
      }
      return result;
    }
  }
}
