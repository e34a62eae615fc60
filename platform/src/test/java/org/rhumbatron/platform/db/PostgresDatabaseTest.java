package org.rhumbatron.platform.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.db.TestDatabases;

class PostgresDatabaseTest extends DatabaseContract {

  @RegisterExtension final DatabaseExtension extension = DatabaseExtension.postgres();

  @Override
  TestDatabase db() {
    return extension.database();
  }

  @Override
  SQLException transientError() {
    return new SQLException("could not serialize access due to concurrent update", "40001");
  }

  /**
   * A process paused inside a transaction (SIGSTOP) must not hold its locks for good: the server
   * ends its session after {@code idleInTransactionTimeout} and rolls it back, and the work runs
   * again on a fresh connection when the process goes on.
   */
  @Test
  void aTransactionIdlePastTheTimeoutIsRolledBackAndRunsAgain() {
    Database db = open(options().idleInTransactionTimeout(Duration.ofMillis(300)).build());
    Database watcher = open();
    String timeout =
        db.read(
            tx ->
                tx.queryFirst("SHOW idle_in_transaction_session_timeout", rs -> rs.getString(1))
                    .orElseThrow());
    assertThat(timeout).isEqualTo("300ms");
    AtomicInteger runs = new AtomicInteger();
    int committed =
        db.inTransaction(
            tx -> {
              int run = runs.incrementAndGet();
              tx.update(
                  "INSERT INTO actor_state (actor_class, actor_id, state_key, state_value,"
                      + " updated_at_ms) VALUES ('idle', ?, 'k', 'v', 0)",
                  "run" + run);
              if (run == 1) {
                long session = tx.queryLong("SELECT pg_backend_pid()");
                // Paused: nothing more is sent until the server has ended the session.
                await()
                    .atMost(Duration.ofSeconds(10))
                    .until(
                        () ->
                            queryLong(
                                    watcher,
                                    "SELECT COUNT(*) FROM pg_stat_activity WHERE pid = " + session)
                                == 0);
              }
              return run;
            });
    assertThat(committed).isEqualTo(2);
    List<String> rows =
        db.read(
            tx ->
                tx.query(
                    "SELECT actor_id FROM actor_state WHERE actor_class = 'idle'",
                    rs -> rs.getString(1)));
    assertThat(rows).containsExactly("run2");
  }

  /**
   * The lock goes out with the transaction's next statement: that statement waits for the lock's
   * holder and reads what the holder committed, and a query, an update and a batch all work after
   * it.
   */
  @Test
  void aLockSentWithTheNextStatementMakesItWaitAndSeeTheHoldersWrite() throws Exception {
    Database db = open();
    Database watcher = open();
    CountDownLatch release = new CountDownLatch(1);
    ExecutorService thread = Executors.newSingleThreadExecutor();
    CompletableFuture<Integer> holder =
        CompletableFuture.supplyAsync(
            () ->
                db.inTransaction(
                    tx -> {
                      tx.lockUntilEnd(42);
                      int inserted =
                          tx.update(
                              "INSERT INTO actor_state (actor_class, actor_id, state_key,"
                                  + " state_value, updated_at_ms) VALUES ('lock', 'a', 'k', 'v', 0)");
                      try {
                        release.await(10, TimeUnit.SECONDS);
                      } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                      }
                      return inserted;
                    }),
            thread);
    String locks =
        "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND granted = %s"
            + " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())";
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> queryLong(watcher, locks.formatted("true")) == 1);

    CompletableFuture<Long> waiter =
        CompletableFuture.supplyAsync(
            () ->
                db.inTransaction(
                    tx -> {
                      tx.lockUntilEnd(42);
                      return tx.queryFirst(
                              "SELECT COUNT(*) FROM actor_state WHERE actor_class = 'lock'",
                              rs -> rs.getLong(1))
                          .orElseThrow();
                    }));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> queryLong(watcher, locks.formatted("false")) == 1);
    assertThat(waiter).isNotDone();
    release.countDown();
    assertThat(holder.get(10, TimeUnit.SECONDS)).isEqualTo(1);
    assertThat(waiter.get(10, TimeUnit.SECONDS)).isEqualTo(1);
    thread.shutdown();

    List<String> read =
        db.inTransaction(
            tx -> {
              tx.lockUntilEnd(43);
              List<String> ids =
                  tx.query(
                      "SELECT actor_id FROM actor_state WHERE actor_class = ?",
                      rs -> rs.getString(1),
                      "lock");
              tx.lockUntilEnd(44);
              int[] batch =
                  tx.updateBatch(
                      "UPDATE actor_state SET version = version + 1 WHERE actor_id = ?",
                      List.of(new Object[] {"a"}, new Object[] {"none"}));
              assertThat(batch).containsExactly(1, 0);
              return ids;
            });
    assertThat(read).containsExactly("a");
  }

  @Test
  void aDeadlockIsRetriedAndBothTransactionsCommit() throws Exception {
    Database db = open();
    db.inTransaction(
        tx -> {
          tx.update(
              "INSERT INTO actor_state (actor_class, actor_id, state_key, state_value,"
                  + " updated_at_ms) VALUES ('A', 'a', 'k', '0', 0), ('A', 'b', 'k', '0', 0)");
          return null;
        });
    CyclicBarrier bothHoldOneRow = new CyclicBarrier(2);

    ExecutorService threads = Executors.newFixedThreadPool(2);
    CompletableFuture<Void> ab =
        CompletableFuture.runAsync(() -> lockBoth(db, "a", "b", bothHoldOneRow), threads);
    CompletableFuture<Void> ba =
        CompletableFuture.runAsync(() -> lockBoth(db, "b", "a", bothHoldOneRow), threads);

    CompletableFuture.allOf(ab, ba).get(30, TimeUnit.SECONDS);
    threads.shutdown();
    assertThat(db.transientRetries()).isGreaterThanOrEqualTo(1);
    assertThat(queryLong(db, "SELECT SUM(version) FROM actor_state")).isEqualTo(4);
  }

  /**
   * Updates {@code first} then {@code second}; the first run waits until the other holds its row.
   */
  private static void lockBoth(Database db, String first, String second, CyclicBarrier barrier) {
    AtomicBoolean firstRun = new AtomicBoolean(true);
    db.inTransaction(
        tx -> {
          bump(tx, first);
          if (firstRun.getAndSet(false)) {
            try {
              barrier.await(10, TimeUnit.SECONDS);
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
          }
          return bump(tx, second);
        });
  }

  private static int bump(Tx tx, String actorId) throws SQLException {
    return tx.update(
        "UPDATE actor_state SET version = version + 1 WHERE actor_class = 'A' AND actor_id = ?",
        actorId);
  }

  @Test
  void bothDialectsHaveTheSameTablesAndColumns() throws Exception {
    try (TestDatabase sqliteFile = TestDatabases.sqlite();
        Database sqlite = Database.open(sqliteFile.url());
        Database postgres = open()) {
      assertThat(columns(postgres))
          .isEqualTo(columns(sqlite))
          .containsKeys("outbox", Migrations.HISTORY_TABLE);
    }
  }

  private static Map<String, List<String>> columns(Database db) {
    return db.read(
        tx -> {
          Map<String, List<String>> out = new TreeMap<>();
          DatabaseMetaData meta = tx.connection().getMetaData();
          for (String table : V1_TABLES_AND_VERSION) {
            List<String> names = new ArrayList<>();
            try (ResultSet rs = meta.getColumns(null, null, table, null)) {
              while (rs.next()) {
                names.add(rs.getString("COLUMN_NAME"));
              }
            }
            names.sort(null);
            out.put(table, names);
          }
          return out;
        });
  }

  private static final List<String> V1_TABLES_AND_VERSION =
      java.util.stream.Stream.concat(
              V1_TABLES.stream(), java.util.stream.Stream.of(Migrations.HISTORY_TABLE))
          .toList();

  @Test
  void closingATestDatabaseDropsItDespiteOpenConnections() throws Exception {
    TestDatabase other = TestDatabases.postgres();
    Connection open = other.connect();

    other.close();

    assertThat(open.isValid(2)).isFalse();
    try (Database db = open()) {
      assertThat(queryLong(db, "SELECT COUNT(*) FROM pg_database WHERE datname = ?", other.name()))
          .isZero();
    }
    open.close();
  }
}
