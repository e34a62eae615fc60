package org.rhumbatron.platform.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.testkit.db.TestDatabase;

/**
 * The database layer's behaviour, run once per database by {@link SqliteDatabaseTest} and {@link
 * PostgresDatabaseTest} (db-scheduler's CompatibilityTest pattern).
 */
abstract class DatabaseContract {

  static final List<String> V1_TABLES =
      List.of(
          "actor_alarms",
          "actor_state",
          "outbox",
          "processed_events",
          "project_events",
          "k2_batch_failures",
          "dead_letters",
          "platform_metrics",
          "projects",
          "changes",
          "tasks",
          "candidates",
          "releases",
          "project_indexes");

  static final long T0 = Instant.parse("2025-01-01T00:00:00Z").toEpochMilli();

  private final List<Database> opened = new ArrayList<>();

  @TempDir Path tmp;

  /** The fresh database of the running test. */
  abstract TestDatabase db();

  /** A transient error as this database's driver reports it. */
  abstract SQLException transientError();

  Database open() {
    return open(DatabaseOptions.defaults());
  }

  Database open(DatabaseOptions options) {
    Database db = Database.open(db().url(), options);
    opened.add(db);
    return db;
  }

  static DatabaseOptions.Builder options() {
    return DatabaseOptions.builder().clock(Clock.fixed(Instant.ofEpochMilli(T0), ZoneOffset.UTC));
  }

  @AfterEach
  void closeDatabases() {
    opened.forEach(Database::close);
  }

  @Test
  void aReadSeesEveryWriteCommittedBeforeIt() {
    Database db = open();
    for (int i = 1; i <= 20; i++) {
      String id = "e" + i;
      db.inTransaction(
          tx ->
              tx.update(
                  "INSERT INTO processed_events (consumer, event_id, processed_at_ms)"
                      + " VALUES ('c', ?, 0)",
                  id));
      long seen = db.read(tx -> tx.queryLong("SELECT COUNT(*) FROM processed_events"));
      assertThat(seen).as("read after commit %d", i).isEqualTo(i);
    }
  }

  @Test
  void aBatchReportsTheRowsEachOfItsRowsChanged() {
    Database db = open();
    String insert =
        "INSERT INTO processed_events (consumer, event_id, processed_at_ms) VALUES (?, ?, ?)"
            + " ON CONFLICT DO NOTHING";
    db.inTransaction(tx -> tx.update(insert, "c", "e2", 0L));
    int[] counts =
        db.inTransaction(
            tx ->
                tx.updateBatch(
                    insert,
                    List.of(
                        new Object[] {"c", "e1", 1L},
                        new Object[] {"c", "e2", 1L},
                        new Object[] {"c", "e3", 1L},
                        new Object[] {"c", "e1", 1L})));
    assertThat(counts).as("e2 was there, e1 twice in the batch").containsExactly(1, 0, 1, 0);
    int[] none = db.inTransaction(tx -> tx.updateBatch(insert, List.of()));
    assertThat(none).isEmpty();
    assertThat(queryLong(db, "SELECT COUNT(*) FROM processed_events")).isEqualTo(3);
  }

  @Test
  void aFailedBatchLeavesNothingForTheNextBatchOfTheSameStatement() {
    Database db = open();
    String insert =
        "INSERT INTO processed_events (consumer, event_id, processed_at_ms) VALUES (?, ?, ?)";
    List<Object[]> broken = List.of(new Object[] {"c", "e1", 1L}, new Object[] {"c", null, 1L});
    assertThatThrownBy(() -> db.inTransaction(tx -> tx.updateBatch(insert, broken)))
        .isInstanceOf(DatabaseException.class);
    List<Object[]> next = new ArrayList<>();
    next.add(new Object[] {"c", "e2", 2L});
    int[] counts = db.inTransaction(tx -> tx.updateBatch(insert, next));
    assertThat(counts).containsExactly(1);
    assertThat(queryLong(db, "SELECT COUNT(*) FROM processed_events")).isEqualTo(1);
  }

  // Migrations ------------------------------------------------------------------------------

  @Test
  void migrationsApplyAndAreIdempotentOnReopen() throws SQLException {
    // Every shipped migration (V1 and the later ones), newest last.
    List<Migration> shipped = shipped();
    int newest = shipped.get(shipped.size() - 1).version();
    List<String> expectedRows = shipped.stream().map(m -> m.version() + " " + m.file()).toList();
    assertThat(shipped.get(0).file()).isEqualTo("V1__initial_schema.sql");
    List<String> installed;
    try (Database db = Database.open(db().url(), options().build())) {
      assertThat(Migrations.currentVersion(db)).isEqualTo(newest);
      for (String table : V1_TABLES) {
        assertThat(queryLong(db, "SELECT COUNT(*) FROM " + table)).isZero();
      }
      installed = history(db, true);
    }
    Clock later = Clock.fixed(Instant.ofEpochMilli(T0 + 60_000), ZoneOffset.UTC);
    try (Database db = Database.open(db().url(), options().clock(later).build())) {
      assertThat(Migrations.currentVersion(db)).isEqualTo(newest);
      assertThat(history(db, false)).containsExactlyElementsOf(expectedRows);
      assertThat(history(db, true)).as("re-opening applied nothing").isEqualTo(installed);
    }
  }

  @Test
  void aDatabaseOfTheRunnerBeforeFlywayUpgradesInPlace() throws SQLException {
    List<Migration> shipped = shipped();
    int newest = shipped.get(shipped.size() - 1).version();
    legacyDatabaseUpTo(14, shipped);

    try (Database db = open(options().build())) {
      assertThat(Migrations.currentVersion(db)).isEqualTo(newest);
      assertThat(history(db, false))
          .as("baselined at V14, then the newer files")
          .containsExactlyElementsOf(
              java.util.stream.Stream.concat(
                      java.util.stream.Stream.of("14 " + FlywayMigrator.BASELINE_DESCRIPTION),
                      shipped.stream()
                          .filter(m -> m.version() > 14)
                          .map(m -> m.version() + " " + m.file()))
                  .toList());
      assertThat(queryLong(db, "SELECT COUNT(*) FROM processed_events WHERE event_id = 'kept'"))
          .as("rows written before the upgrade are kept")
          .isEqualTo(1);
      assertThat(queryLong(db, "SELECT COUNT(*) FROM outbox WHERE epoch IS NULL"))
          .as("V15 added outbox.epoch")
          .isZero();
      try (Connection c = db().connect()) {
        assertThat(tableExists(c, Migrations.LEGACY_TABLE)).as("dropped by V18").isFalse();
      }
    }
    try (Database db = open(options().build())) {
      assertThat(Migrations.currentVersion(db)).as("re-opened").isEqualTo(newest);
    }
  }

  @Test
  void aDatabaseOfTheRunnerBeforeFlywayWithAnEditedFileIsRefused() throws SQLException {
    List<Migration> shipped = shipped();
    legacyDatabaseUpTo(14, shipped);
    try (Connection c = db().connect();
        Statement st = c.createStatement()) {
      st.execute("UPDATE schema_version SET checksum = 'edited' WHERE version = 3");
    }

    assertThatThrownBy(() -> open(options().build()))
        .isInstanceOf(MigrationException.class)
        .hasMessageContaining("V3__queues.sql")
        .hasMessageContaining("changed after it was applied");
  }

  @Test
  void processesOpeningOneDatabaseAtOnceApplyEachMigrationOnce() throws Exception {
    int newest = shipped().get(shipped().size() - 1).version();
    int opening = 4;
    ExecutorService pool = Executors.newFixedThreadPool(opening);
    try {
      java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(opening);
      List<Future<Database>> opens = new ArrayList<>();
      for (int i = 0; i < opening; i++) {
        // Each Database has its own connections, as a second process would.
        opens.add(
            pool.submit(
                () -> {
                  start.await(30, TimeUnit.SECONDS);
                  return open(options().build());
                }));
      }
      for (Future<Database> f : opens) {
        Database db = f.get(60, TimeUnit.SECONDS);
        assertThat(Migrations.currentVersion(db)).isEqualTo(newest);
      }
      Database db = opens.get(0).get();
      assertThat(history(db, false)).doesNotHaveDuplicates().hasSize(shipped().size());
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void theFeedKeepsItsRowsAndItsSequenceThroughV5() {
    MigrationSource shipped = Migrations.classpath(Migrations.DEFAULT_LOCATION);
    MigrationSource upToV4 =
        dialect -> shipped.load(dialect).stream().filter(m -> m.version() <= 4).toList();
    String feedRow =
        "INSERT INTO project_events (project_id, event_id, event_type, stream_index, stream_seq,"
            + " occurred_at_ms, event, recorded_at_ms) VALUES ('p', ?, 'task.ready', 0, ?, 0,"
            + " '{}', 0)";
    try (Database db = Database.open(db().url(), options().migrations(upToV4).build())) {
      assertThat(Migrations.currentVersion(db)).isEqualTo(4);
      db.inTransaction(tx -> tx.update(feedRow, "e1", 1L) + tx.update(feedRow, "e2", 2L));
      db.inTransaction(tx -> tx.update("DELETE FROM project_events WHERE event_id = 'e2'"));
    }
    try (Database db = Database.open(db().url(), options().build())) {
      assertThat(Migrations.currentVersion(db)).isGreaterThanOrEqualTo(5);
      db.inTransaction(tx -> tx.update(feedRow, "e3", 3L) + tx.update(feedRow, "e1", 4L));
      List<String> rows =
          db.read(
              tx ->
                  tx.query(
                      "SELECT feed_seq, event_id FROM project_events ORDER BY feed_seq",
                      rs -> rs.getLong(1) + " " + rs.getString(2)));
      assertThat(rows)
          .as("e1 kept with its feed_seq; e2's seq not reused; the event key is gone")
          .containsExactly("1 e1", "3 e3", "4 e1");
    }
  }

  @Test
  void aBrokenMigrationNamesItsFileAndRollsBack() throws Exception {
    Path root = migrations("V1__base.sql", "CREATE TABLE t1 (id INTEGER PRIMARY KEY);");
    write(
        root,
        "V2__broken.sql",
        "CREATE TABLE t2 (id INTEGER PRIMARY KEY);\n-- a comment\nINSERT INTO no_such_table VALUES (1);\n");
    DatabaseOptions opts = options().migrations(Migrations.directory(root)).build();

    assertThatThrownBy(() -> open(opts))
        .isInstanceOf(MigrationException.class)
        .hasMessageContaining("V2__broken.sql")
        .hasMessageContaining("line 3")
        .satisfies(e -> assertThat(((MigrationException) e).file()).isEqualTo("V2__broken.sql"));

    try (Connection c = db().connect()) {
      assertThat(versions(c)).containsExactly(1);
      assertThat(tableExists(c, "t1")).isTrue();
      assertThat(tableExists(c, "t2")).as("V2's first statement rolled back").isFalse();
    }
  }

  @Test
  void anEditedAppliedMigrationIsRefused() throws Exception {
    Path root = migrations("V1__base.sql", "CREATE TABLE t1 (id INTEGER PRIMARY KEY);");
    DatabaseOptions opts = options().migrations(Migrations.directory(root)).build();
    open(opts).close();
    write(root, "V1__base.sql", "CREATE TABLE t1 (id INTEGER PRIMARY KEY, x TEXT);");

    assertThatThrownBy(() -> open(opts))
        .isInstanceOf(MigrationException.class)
        .hasMessageContaining("V1__base.sql")
        .hasMessageContaining("changed after it was applied");
  }

  @Test
  void aDatabaseNewerThanTheBuildIsRefused() throws Exception {
    Path root = migrations("V1__base.sql", "CREATE TABLE t1 (id INTEGER PRIMARY KEY);");
    write(root, "V2__more.sql", "CREATE TABLE t2 (id INTEGER PRIMARY KEY);");
    open(options().migrations(Migrations.directory(root)).build()).close();
    Files.delete(root.resolve(dialectName()).resolve("V2__more.sql"));

    assertThatThrownBy(() -> open(options().migrations(Migrations.directory(root)).build()))
        .isInstanceOf(MigrationException.class)
        .hasMessageContaining("V2__more.sql")
        .hasMessageContaining("newer than this build");
  }

  @Test
  void aMisnamedMigrationFileIsNamed() throws Exception {
    Path root = migrations("V1_one_underscore.sql", "CREATE TABLE t1 (id INTEGER PRIMARY KEY);");

    assertThatThrownBy(() -> open(options().migrations(Migrations.directory(root)).build()))
        .isInstanceOf(MigrationException.class)
        .hasMessageContaining("V1_one_underscore.sql");
  }

  // Dialect SQL --------------------------------------------------------------------------------

  @Test
  void insertIgnoreChangesNoRowForARepeat() {
    Database db = open();
    String claim =
        db.dialect().insertIgnore("processed_events", "consumer", "event_id", "processed_at_ms");

    int fresh = db.inTransaction(tx -> tx.update(claim, "causal-router", "evt_1", T0));
    int repeat = db.inTransaction(tx -> tx.update(claim, "causal-router", "evt_1", T0));
    int otherConsumer =
        db.inTransaction(tx -> tx.update(claim, "project-view-projector", "evt_1", T0));
    assertThat(List.of(fresh, repeat, otherConsumer)).containsExactly(1, 0, 1);

    // The outbox's event_id UNIQUE: a retried step that appends the same event is ignored.
    int appended = db.inTransaction(tx -> appendOutbox(tx, "evt_9", new byte[] {1}));
    int appendedAgain = db.inTransaction(tx -> appendOutbox(tx, "evt_9", new byte[] {2}));
    assertThat(List.of(appended, appendedAgain)).containsExactly(1, 0);
    assertThat(queryLong(db, "SELECT COUNT(*) FROM outbox")).isEqualTo(1);
  }

  @Test
  void upsertInsertsThenUpdates() {
    Database db = open();
    String upsert =
        db.dialect()
            .upsert(
                "actor_state",
                List.of("actor_class", "actor_id", "state_key"),
                "actor_class",
                "actor_id",
                "state_key",
                "state_value",
                "updated_at_ms");

    db.inTransaction(tx -> tx.update(upsert, "ProjectRoot", "p1", "root", "{\"g\":0}", T0));
    db.inTransaction(tx -> tx.update(upsert, "ProjectRoot", "p1", "root", "{\"g\":1}", T0 + 1));

    List<String> rows =
        db.read(
            tx ->
                tx.query(
                    "SELECT state_value, updated_at_ms FROM actor_state",
                    rs -> rs.getString(1) + "@" + rs.getLong(2)));
    assertThat(rows).containsExactly("{\"g\":1}@" + (T0 + 1));
  }

  @Test
  void deleteLimitedDeletesAtMostTheLimitOldestFirst() {
    Database db = open();
    db.inTransaction(
        tx -> {
          for (int i = 0; i < 10; i++) {
            tx.update(
                "INSERT INTO processed_events (consumer, event_id, processed_at_ms) VALUES (?, ?, ?)",
                "c",
                "evt_" + i,
                (long) i);
          }
          return null;
        });
    String purge =
        db.dialect().deleteLimited("processed_events", "processed_at_ms < ?", "processed_at_ms", 3);

    int deleted = db.inTransaction(tx -> tx.update(purge, 8L));
    assertThat(deleted).isEqualTo(3);
    assertThat(queryLong(db, "SELECT MIN(processed_at_ms) FROM processed_events")).isEqualTo(3);
    assertThat(queryLong(db, "SELECT COUNT(*) FROM processed_events")).isEqualTo(7);
  }

  @Test
  void bytesRoundTripAndOutboxStateIsChecked() {
    Database db = open();
    byte[] payload = {0, 1, (byte) 0xff, 42};
    db.inTransaction(tx -> appendOutbox(tx, "evt_1", payload));

    byte[] read =
        db.read(tx -> tx.queryFirst("SELECT payload FROM outbox", rs -> rs.getBytes(1)))
            .orElseThrow();
    assertThat(read).isEqualTo(payload);
    assertThatThrownBy(() -> db.inTransaction(tx -> tx.update("UPDATE outbox SET state = 'sent'")))
        .isInstanceOf(DatabaseException.class)
        .hasMessageContaining(db.url());
  }

  @Test
  void foreignKeysAreEnforced() {
    Database db = open();

    assertThatThrownBy(() -> db.inTransaction(tx -> insertTask(tx, "task_1", "chg_missing")))
        .isInstanceOf(DatabaseException.class)
        .satisfies(e -> assertThat(e.getMessage()).containsIgnoringCase("foreign key"));
  }

  // Transactions --------------------------------------------------------------------------------

  @Test
  void aTransactionThatThrowsRollsBackFully() {
    Database db = open();
    IllegalStateException boom = new IllegalStateException("boom");

    assertThatThrownBy(
            () ->
                db.inTransaction(
                    tx -> {
                      insertProject(tx, "p1");
                      insertChange(tx, "chg_1", "p1", "req_1");
                      appendOutbox(tx, "evt_1", new byte[] {1});
                      throw boom;
                    }))
        .isSameAs(boom);
    assertThat(countAll(db, "projects", "changes", "outbox")).isZero();

    // A SQL error halfway (duplicate client_request_id) also undoes the earlier statements.
    assertThatThrownBy(
            () ->
                db.inTransaction(
                    tx -> {
                      insertProject(tx, "p1");
                      insertChange(tx, "chg_1", "p1", "req_1");
                      return insertChange(tx, "chg_2", "p1", "req_1");
                    }))
        .isInstanceOf(DatabaseException.class);
    assertThat(countAll(db, "projects", "changes")).isZero();

    // The connection is clean afterwards.
    db.inTransaction(tx -> insertProject(tx, "p1"));
    assertThat(countAll(db, "projects")).isEqualTo(1);
  }

  @Test
  void anAsyncTransactionCompletesWithItsResultOrItsOwnExceptionAfterTheCommit() throws Exception {
    Database db = open();
    IllegalStateException boom = new IllegalStateException("boom");

    CompletableFuture<Long> committed =
        db.inTransactionAsync(
            tx -> {
              insertProject(tx, "p1");
              return tx.queryLong("SELECT COUNT(*) FROM projects");
            });
    CompletableFuture<Object> failed =
        db.inTransactionAsync(
            tx -> {
              insertProject(tx, "p2");
              throw boom;
            });
    CompletableFuture<Integer> sqlError = db.inTransactionAsync(tx -> insertProject(tx, "p1"));

    assertThat(committed.get(10, TimeUnit.SECONDS)).isEqualTo(1L);
    assertThatThrownBy(() -> failed.get(10, TimeUnit.SECONDS)).hasCauseReference(boom);
    assertThatThrownBy(() -> sqlError.get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(DatabaseException.class);
    // What the future reports is committed: a read after it sees p1 and nothing of p2.
    List<String> projects =
        db.read(tx -> tx.query("SELECT project_id FROM projects", rs -> rs.getString(1)));
    assertThat(projects).containsExactly("p1");
  }

  @Test
  void readInsideATransactionSeesItsWrites() {
    Database db = open();
    long seen =
        db.inTransaction(
            tx -> {
              insertProject(tx, "p1");
              return db.read(r -> r.queryLong("SELECT COUNT(*) FROM projects"));
            });
    assertThat(seen).isEqualTo(1);
  }

  @Test
  void aNestedTransactionIsRefusedAndTheOuterOneRollsBack() {
    Database db = open();
    List<TxWork<Object>> nested =
        List.of(
            tx -> db.inTransaction(inner -> insertProject(inner, "p2")),
            tx -> db.inTransactionAsync(inner -> insertProject(inner, "p2")));

    for (TxWork<Object> inner : nested) {
      assertThatThrownBy(
              () ->
                  db.inTransaction(
                      tx -> {
                        insertProject(tx, "p1");
                        return inner.run(tx);
                      }))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("pass the Tx down");
      assertThat(countAll(db, "projects")).isZero();
    }
  }

  @Test
  void aTransientErrorRerunsTheWork() {
    Database db = open();
    AtomicInteger runs = new AtomicInteger();

    int changed =
        db.inTransaction(
            tx -> {
              int n = insertProject(tx, "p1");
              if (runs.incrementAndGet() == 1) {
                throw transientError();
              }
              return n;
            });

    assertThat(changed).isEqualTo(1);
    assertThat(runs).hasValue(2);
    assertThat(db.transientRetries()).isEqualTo(1);
    assertThat(countAll(db, "projects")).isEqualTo(1);
  }

  @Test
  void aTransientErrorThatPersistsGivesUpWithADatabaseException() {
    Database db = open(options().maxAttempts(3).build());
    AtomicInteger runs = new AtomicInteger();

    assertThatThrownBy(
            () ->
                db.inTransaction(
                    tx -> {
                      runs.incrementAndGet();
                      insertProject(tx, "p1");
                      throw transientError();
                    }))
        .isInstanceOf(DatabaseException.class)
        .hasMessageContaining("gave up after 3 attempts");
    assertThat(runs).hasValue(3);
    assertThat(countAll(db, "projects")).isZero();
  }

  @Test
  void concurrentWritersAllLand() throws Exception {
    Database db = open();
    int threads = 4;
    int perThread = 200;
    runConcurrently(List.of(db), threads, perThread);

    assertThat(countAll(db, "outbox")).isEqualTo(threads * perThread);
    assertThat(queryLong(db, "SELECT SUM(fires_count) FROM actor_alarms"))
        .isEqualTo(threads * perThread);
  }

  // Small parts ----------------------------------------------------------------------------

  String dialectName() {
    return db().kind() == TestDatabase.Kind.SQLITE ? "sqlite" : "postgres";
  }

  /** Each thread runs {@code perThread} transactions of one upsert and one outbox insert. */
  static void runConcurrently(List<Database> dbs, int threadsPerDb, int perThread)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(dbs.size() * threadsPerDb);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int d = 0; d < dbs.size(); d++) {
        Database db = dbs.get(d);
        for (int t = 0; t < threadsPerDb; t++) {
          String writer = "w" + d + "_" + t;
          futures.add(
              pool.submit(
                  () -> {
                    for (int i = 0; i < perThread; i++) {
                      String eventId = "evt_" + writer + "_" + i;
                      db.inTransaction(
                          tx -> upsertAndAppend(tx, "shard-" + (eventId.hashCode() & 3), eventId));
                    }
                    return null;
                  }));
        }
      }
      for (Future<?> f : futures) {
        f.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /** The shape of an actor's commit: one state upsert plus one outbox row. */
  static int upsertAndAppend(Tx tx, String actorId, String eventId) throws SQLException {
    tx.update(
        "INSERT INTO actor_alarms (actor_class, actor_id, due_at_ms, fires_count, updated_at_ms)"
            + " VALUES ('ResourceShard', ?, ?, 1, ?)"
            + " ON CONFLICT (actor_class, actor_id) DO UPDATE SET"
            + " fires_count = actor_alarms.fires_count + 1, due_at_ms = excluded.due_at_ms,"
            + " updated_at_ms = excluded.updated_at_ms",
        actorId,
        T0 + 1000,
        T0);
    return appendOutbox(tx, eventId, new byte[64]);
  }

  static int appendOutbox(Tx tx, String eventId, byte[] payload) throws SQLException {
    return tx.update(
        tx.dialect()
            .insertIgnore(
                "outbox",
                "actor_class",
                "actor_id",
                "project_id",
                "event_id",
                "event_type",
                "stream_index",
                "subject",
                "payload",
                "next_attempt_at_ms",
                "created_at_ms"),
        "ResourceShard",
        "p1/0",
        "p1",
        eventId,
        "task.completed",
        3,
        "events.03",
        payload,
        T0,
        T0);
  }

  static int insertProject(Tx tx, String projectId) throws SQLException {
    return tx.update(
        "INSERT INTO projects (project_id, tenant_id, name, created_at_ms, updated_at_ms)"
            + " VALUES (?, 't1', ?, ?, ?)",
        projectId,
        projectId,
        T0,
        T0);
  }

  static int insertChange(Tx tx, String changeId, String projectId, String requestId)
      throws SQLException {
    return tx.update(
        "INSERT INTO changes (change_id, project_id, client_request_id, created_at_ms,"
            + " updated_at_ms, last_activity_at_ms) VALUES (?, ?, ?, ?, ?, ?)",
        changeId,
        projectId,
        requestId,
        T0,
        T0,
        T0);
  }

  static int insertTask(Tx tx, String taskId, String changeId) throws SQLException {
    return tx.update(
        "INSERT INTO tasks (task_id, change_id, project_id, created_at_ms, updated_at_ms)"
            + " VALUES (?, ?, 'p1', ?, ?)",
        taskId,
        changeId,
        T0,
        T0);
  }

  static long queryLong(Database db, String sql, Object... args) {
    return db.read(tx -> tx.queryLong(sql, args));
  }

  static long countAll(Database db, String... tables) {
    return db.read(
        tx -> {
          long n = 0;
          for (String t : tables) {
            n += tx.queryLong("SELECT COUNT(*) FROM " + t);
          }
          return n;
        });
  }

  private Path migrations(String file, String sql) throws IOException {
    Path root = tmp.resolve("migrations");
    write(root, file, sql);
    return root;
  }

  private void write(Path root, String file, String sql) throws IOException {
    Path dir = Files.createDirectories(root.resolve(dialectName()));
    Files.writeString(dir.resolve(file), sql);
  }

  private static List<Integer> versions(Connection c) throws SQLException {
    List<Integer> out = new ArrayList<>();
    try (Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT CAST(version AS INTEGER) FROM "
                    + Migrations.HISTORY_TABLE
                    + " WHERE success ORDER BY 1")) {
      while (rs.next()) {
        out.add(rs.getInt(1));
      }
    }
    return out;
  }

  private List<Migration> shipped() {
    return Migrations.classpath(Migrations.DEFAULT_LOCATION).load(dialect()).stream()
        .sorted(java.util.Comparator.comparingInt(Migration::version))
        .toList();
  }

  private Dialect dialect() {
    return db().kind() == TestDatabase.Kind.SQLITE
        ? SqliteDialect.INSTANCE
        : PostgresDialect.INSTANCE;
  }

  /**
   * Flyway's applied rows in order: {@code "<version> <file>"}, or with {@code installed} also the
   * rank and time of each, which a re-run would change.
   */
  private static List<String> history(Database db, boolean installed) {
    return db.read(
        tx ->
            tx.query(
                "SELECT version, script, installed_rank, installed_on FROM "
                    + Migrations.HISTORY_TABLE
                    + " WHERE success ORDER BY installed_rank",
                rs ->
                    rs.getString(1)
                        + " "
                        + rs.getString(2)
                        + (installed ? " " + rs.getInt(3) + " " + rs.getString(4) : "")));
  }

  /**
   * What the runner before Flyway left: the schema up to {@code version}, one row with data, and
   * its own {@code schema_version} table with a row and SHA-256 checksum per applied file.
   */
  private void legacyDatabaseUpTo(int version, List<Migration> shipped) throws SQLException {
    List<Migration> applied = shipped.stream().filter(m -> m.version() <= version).toList();
    try (Database db = Database.open(db().url(), options().migrations(d -> applied).build())) {
      db.inTransaction(
          tx ->
              tx.update(
                  "INSERT INTO processed_events (consumer, event_id, processed_at_ms)"
                      + " VALUES ('c', 'kept', 0)"));
    }
    try (Connection c = db().connect();
        Statement st = c.createStatement()) {
      st.execute("DROP TABLE " + Migrations.HISTORY_TABLE);
      st.execute(
          "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
              + " file TEXT NOT NULL, checksum TEXT NOT NULL, applied_at_ms BIGINT NOT NULL)");
      try (var insert =
          c.prepareStatement(
              "INSERT INTO schema_version (version, name, file, checksum, applied_at_ms)"
                  + " VALUES (?, ?, ?, ?, ?)")) {
        for (Migration m : applied) {
          insert.setInt(1, m.version());
          insert.setString(2, m.name());
          insert.setString(3, m.file());
          insert.setString(4, m.checksum());
          insert.setLong(5, T0);
          insert.executeUpdate();
        }
      }
    }
  }

  private static boolean tableExists(Connection c, String table) throws SQLException {
    try (ResultSet rs = c.getMetaData().getTables(null, null, table, null)) {
      return rs.next();
    }
  }
}
