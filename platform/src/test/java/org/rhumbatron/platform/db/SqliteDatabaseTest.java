package org.rhumbatron.platform.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.db.TestDatabase;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;

class SqliteDatabaseTest extends DatabaseContract {

  @RegisterExtension final DatabaseExtension extension = DatabaseExtension.sqlite();

  @Override
  TestDatabase db() {
    return extension.database();
  }

  @Override
  SQLException transientError() {
    return new SQLiteException(
        "[SQLITE_BUSY] The database file is locked (database is locked)",
        SQLiteErrorCode.SQLITE_BUSY);
  }

  @Test
  void connectionsUseWalNormalSyncBusyTimeoutForeignKeysAndMemoryTemp() {
    Database db = open(options().busyTimeout(Duration.ofMillis(1234)).build());

    List<String> pragmas =
        db.inTransaction(
            tx ->
                List.of(
                    tx.queryFirst("PRAGMA journal_mode", rs -> rs.getString(1)).orElseThrow(),
                    "synchronous=" + tx.queryLong("PRAGMA synchronous"),
                    "busy_timeout=" + tx.queryLong("PRAGMA busy_timeout"),
                    "foreign_keys=" + tx.queryLong("PRAGMA foreign_keys"),
                    "temp_store=" + tx.queryLong("PRAGMA temp_store")));

    // temp_store 2 (memory) on the writer: a group commit's savepoint journals stay off the disk.
    assertThat(pragmas)
        .containsExactly(
            "wal", "synchronous=1", "busy_timeout=1234", "foreign_keys=1", "temp_store=2");
  }

  @Test
  void readConnectionsAreReadOnly() {
    Database db = open();

    assertThatThrownBy(() -> db.read(tx -> insertProject(tx, "p1")))
        .isInstanceOf(DatabaseException.class)
        .hasMessageContaining("readonly");
  }

  @Test
  void oneInstanceSerializesItsWritersWithoutBusyErrors() throws Exception {
    Database db = open(options().busyTimeout(Duration.ZERO).build());

    runConcurrently(List.of(db), 4, 200);

    assertThat(countAll(db, "outbox")).isEqualTo(800);
    assertThat(db.transientRetries()).as("the writer lock leaves nothing to retry").isZero();
  }

  @Test
  void twoInstancesOnOneFileRetryBusyInsideTheLayer() throws Exception {
    // busy_timeout 0: SQLite reports SQLITE_BUSY at once, so the layer's own retry does the work.
    DatabaseOptions noWait = options().busyTimeout(Duration.ZERO).maxAttempts(10_000).build();
    Database first = open(noWait);
    Database second = open(noWait);

    runConcurrently(List.of(first, second), 4, 200);

    assertThat(countAll(first, "outbox")).isEqualTo(1600);
    assertThat(queryLong(first, "SELECT SUM(fires_count) FROM actor_alarms")).isEqualTo(1600);
  }

  @Test
  void aWriterBlockedByAnotherProcessRetriesUntilTheLockIsFree() throws Exception {
    DatabaseOptions noWait = options().busyTimeout(Duration.ZERO).maxAttempts(10_000).build();
    Database holder = open(noWait);
    Database waiter = open(noWait);
    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ExecutorService threads = Executors.newFixedThreadPool(2);

    CompletableFuture<Integer> held =
        CompletableFuture.supplyAsync(
            () ->
                holder.inTransaction(
                    tx -> {
                      int n = insertProject(tx, "p1");
                      holding.countDown();
                      awaitLatch(release);
                      return n;
                    }),
            threads);
    assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<Integer> blocked =
        CompletableFuture.supplyAsync(
            () -> waiter.inTransaction(tx -> insertProject(tx, "p2")), threads);

    await().atMost(Duration.ofSeconds(10)).until(() -> waiter.transientRetries() > 0);
    assertThat(blocked).isNotDone();
    release.countDown();

    assertThat(held.get(10, TimeUnit.SECONDS)).isEqualTo(1);
    assertThat(blocked.get(10, TimeUnit.SECONDS)).isEqualTo(1);
    assertThat(countAll(waiter, "projects")).isEqualTo(2);
    threads.shutdown();
  }

  /** A transaction that holds the writer until {@code release}, so that work queues behind it. */
  private static CompletableFuture<Integer> holdWriter(
      Database db, CountDownLatch release, String projectId) {
    return db.inTransactionAsync(
        tx -> {
          awaitLatch(release);
          return insertProject(tx, projectId);
        });
  }

  private static void awaitLatch(CountDownLatch latch) {
    try {
      if (!latch.await(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("latch not released");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Test
  void concurrentWritersShareCommitsAndAFailingOneRollsBackAlone() throws Exception {
    Database db = open();
    ExecutorService pool = Executors.newFixedThreadPool(16);
    try {
      List<CompletableFuture<Integer>> writes = new java.util.ArrayList<>();
      for (int i = 0; i < 2_000; i++) {
        int n = i;
        writes.add(
            CompletableFuture.supplyAsync(
                () ->
                    db.inTransaction(
                        tx -> {
                          tx.update(
                              "INSERT INTO processed_events (consumer, event_id, processed_at_ms)"
                                  + " VALUES ('gc', ?, 0)",
                              "e" + n);
                          if (n % 100 == 7) {
                            throw new IllegalStateException("member " + n + " fails");
                          }
                          return n;
                        }),
                pool));
      }
      int failed = 0;
      for (CompletableFuture<Integer> w : writes) {
        try {
          w.join();
        } catch (java.util.concurrent.CompletionException e) {
          assertThat(e.getCause()).isInstanceOf(IllegalStateException.class);
          failed++;
        }
      }
      assertThat(failed).isEqualTo(20);
      Long committed =
          db.read(
              tx -> tx.queryLong("SELECT COUNT(*) FROM processed_events WHERE consumer = 'gc'"));
      Long failedRow =
          db.read(
              tx -> tx.queryLong("SELECT COUNT(*) FROM processed_events WHERE event_id = 'e7'"));
      assertThat(committed).as("every write but the failing ones committed").isEqualTo(1_980L);
      assertThat(failedRow).isZero();
      assertThat(db.groupCommits()).as("16 concurrent writers shared commits").isPositive();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void whatDependsOnAnAsyncCommitRunsOnTheWriterAndMayQueueMoreWork() throws Exception {
    Database db = open();
    // A chain of 3,000 transactions, each queued by the completion of the one before (as an
    // actor's lane queues its next transaction): no thread waits, the stack does not grow, and
    // the chain ends with every row there.
    int links = 3_000;
    CompletableFuture<Integer> end = new CompletableFuture<>();
    java.util.function.IntConsumer[] link = new java.util.function.IntConsumer[1];
    link[0] =
        n ->
            db.inTransactionAsync(
                    tx ->
                        tx.update(
                            "INSERT INTO processed_events (consumer, event_id, processed_at_ms)"
                                + " VALUES ('chain', ?, 0)",
                            "e" + n))
                .whenComplete(
                    (r, e) -> {
                      if (e != null) {
                        end.completeExceptionally(e);
                      } else if (n + 1 == links) {
                        end.complete(n + 1);
                      } else {
                        link[0].accept(n + 1);
                      }
                    });
    link[0].accept(0);

    assertThat(end.get(30, TimeUnit.SECONDS)).isEqualTo(links);
    Long rows =
        db.read(
            tx -> tx.queryLong("SELECT COUNT(*) FROM processed_events WHERE consumer = 'chain'"));
    assertThat(rows).isEqualTo((long) links);
  }

  @Test
  void aDependentThatWaitsForAnotherTransactionOnTheWriterDoesNotDeadlock() throws Exception {
    Database db = open();
    CompletableFuture<Long> inner = new CompletableFuture<>();
    db.inTransactionAsync(tx -> insertProject(tx, "p1"))
        .thenRun(
            () -> {
              // The writer thread's own inTransaction: it leads that batch itself.
              inner.complete(
                  db.inTransaction(
                      tx -> {
                        insertProject(tx, "p2");
                        return tx.queryLong("SELECT COUNT(*) FROM projects");
                      }));
            });

    assertThat(inner.get(10, TimeUnit.SECONDS)).isEqualTo(2L);
  }

  @Test
  void aMemberThatFailsInABatchLeavesNoWritesAndTheOthersCommitOnce() throws Exception {
    Database db = open();
    CountDownLatch release = new CountDownLatch(1);
    // The first transaction holds the writer, so the next three queue into one batch.
    CompletableFuture<Integer> holding = holdWriter(db, release, "p0");
    IllegalStateException boom = new IllegalStateException("boom");
    AtomicInteger failingRuns = new AtomicInteger();
    CompletableFuture<Integer> before = db.inTransactionAsync(tx -> insertProject(tx, "p1"));
    CompletableFuture<Integer> failing =
        db.inTransactionAsync(
            tx -> {
              failingRuns.incrementAndGet();
              insertProject(tx, "bad");
              throw boom;
            });
    CompletableFuture<Integer> after = db.inTransactionAsync(tx -> insertProject(tx, "p2"));
    release.countDown();

    assertThat(holding.get(10, TimeUnit.SECONDS)).isEqualTo(1);
    assertThat(before.get(10, TimeUnit.SECONDS)).isEqualTo(1);
    assertThat(after.get(10, TimeUnit.SECONDS)).isEqualTo(1);
    assertThatThrownBy(() -> failing.get(10, TimeUnit.SECONDS)).hasCauseReference(boom);
    List<String> projects =
        db.read(
            tx -> tx.query("SELECT project_id FROM projects ORDER BY 1", rs -> rs.getString(1)));
    assertThat(projects).containsExactly("p0", "p1", "p2");
    // Once without savepoints (the batch rolled back), once in its own savepoint.
    assertThat(failingRuns).hasValue(2);

    // A transaction alone in its batch fails at once: its work ran one time.
    AtomicInteger loneRuns = new AtomicInteger();
    assertThatThrownBy(
            () ->
                db.inTransaction(
                    tx -> {
                      loneRuns.incrementAndGet();
                      insertProject(tx, "lone");
                      throw boom;
                    }))
        .isSameAs(boom);
    assertThat(loneRuns).hasValue(1);
    assertThat(countAll(db, "projects")).isEqualTo(3);
  }

  @Test
  void closeFailsAsyncWorkNotYetRunAndRefusesNewWork() throws Exception {
    Database db = open();
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch running = new CountDownLatch(1);
    CompletableFuture<Integer> holding =
        db.inTransactionAsync(
            tx -> {
              running.countDown();
              awaitLatch(release);
              return insertProject(tx, "p1");
            });
    // The close must find it running: work not yet picked up fails with the close instead.
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
    List<CompletableFuture<Integer>> queued = new java.util.ArrayList<>();
    for (int i = 0; i < 5; i++) {
      int n = i;
      queued.add(db.inTransactionAsync(tx -> insertProject(tx, "q" + n)));
    }
    Thread closer = new Thread(db::close);
    closer.start();
    release.countDown();
    closer.join(20_000);

    assertThat(closer.isAlive()).isFalse();
    assertThat(holding.get(10, TimeUnit.SECONDS)).isEqualTo(1);
    for (CompletableFuture<Integer> q : queued) {
      // Each either committed with the running batch or failed naming the closed database.
      try {
        assertThat(q.get(10, TimeUnit.SECONDS)).isEqualTo(1);
      } catch (java.util.concurrent.ExecutionException e) {
        assertThat(e.getCause()).isInstanceOf(DatabaseException.class);
        assertThat(e.getCause().getMessage()).contains("closed");
      }
    }
    assertThatThrownBy(() -> db.inTransactionAsync(tx -> insertProject(tx, "late")))
        .isInstanceOf(DatabaseException.class)
        .hasMessageContaining("database is closed");
  }

  @Test
  void checkpointsRunOffTheCommitPathAndCloseEmptiesTheWal() throws Exception {
    String url = db().url();
    java.nio.file.Path file = java.nio.file.Path.of(url.replaceFirst("^jdbc:sqlite:", ""));
    try (Database db = Database.open(url, options().build())) {
      Long auto = db.inTransaction(tx -> tx.queryLong("PRAGMA wal_autocheckpoint"));
      assertThat(auto).as("the writer does not checkpoint in its commits").isZero();
      for (int i = 0; i < 200; i++) {
        int n = i;
        db.inTransaction(
            tx ->
                tx.update(
                    "INSERT INTO processed_events (consumer, event_id, processed_at_ms)"
                        + " VALUES ('wal', ?, 0)",
                    "e" + n));
      }
      assertThat(java.nio.file.Files.size(file.resolveSibling(file.getFileName() + "-wal")))
          .as("the WAL is in use while open")
          .isPositive();
    }
    java.nio.file.Path wal = file.resolveSibling(file.getFileName() + "-wal");
    assertThat(!java.nio.file.Files.exists(wal) || java.nio.file.Files.size(wal) == 0)
        .as("close checkpoints the WAL into the database")
        .isTrue();
  }
}
