package org.rhumbatron.router.maintenance;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.router.deadletter.DeadLetterOperator;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;

/** The housekeeping table's jobs and caps, on rows the test writes; SQLite and PostgreSQL. */
class MaintenanceTest {
  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  private static final Instant DAILY = Instant.parse("2026-12-02T04:17:00Z");
  private static final Instant SWEEP = Instant.parse("2026-12-02T10:04:00Z");

  private Database database;
  private final List<Command> sent = new CopyOnWriteArrayList<>();
  private Maintenance maintenance;

  @BeforeEach
  void open() {
    database = Database.open(db().url());
    maintenance =
        new Maintenance(
            database,
            sent::add,
            deadLetters(database, new SettableClock(SWEEP)),
            Settings.defaults());
  }

  /** The operator service; these tests send through their sink, never through its queue. */
  static DeadLetterOperator deadLetters(Database database, Clock clock) {
    EnvelopeCodec codec = new EnvelopeCodec();
    Commands refusing =
        new Commands(
            (subject, headers, body) ->
                CompletableFuture.failedFuture(new IllegalStateException("no queues here")),
            codec);
    return new DeadLetterOperator(database, refusing, codec, clock);
  }

  @AfterEach
  void close() {
    database.close();
  }

  private void project(String id, String status, long atMs) {
    database.inTransaction(
        tx ->
            tx.update(
                "INSERT INTO projects (project_id, tenant_id, name, status, created_at_ms,"
                    + " updated_at_ms, archived_at_ms, deleted_at_ms) VALUES (?, 't', ?, ?, ?, ?, ?, ?)",
                id,
                id,
                status,
                atMs,
                atMs,
                "archived".equals(status) ? atMs : null,
                "deleted".equals(status) ? atMs : null));
  }

  private void index(String project, String state) {
    database.inTransaction(
        tx ->
            tx.update(
                "INSERT INTO project_indexes (project_id, generation, state, created_at_ms,"
                    + " updated_at_ms) VALUES (?, 0, ?, 0, 0)",
                project,
                state));
  }

  private void change(
      String id, String project, String state, Instant lastActivity, Instant promoted) {
    database.inTransaction(
        tx ->
            tx.update(
                "INSERT INTO changes (change_id, project_id, client_request_id, state,"
                    + " created_at_ms, updated_at_ms, last_activity_at_ms, promoted_at_ms)"
                    + " VALUES (?, ?, ?, ?, 0, 0, ?, ?)",
                id,
                project,
                "req-" + id,
                state,
                lastActivity.toEpochMilli(),
                promoted == null ? null : promoted.toEpochMilli()));
  }

  private List<String> sentIds(String type) {
    return sent.stream()
        .filter(c -> c.commandType().wireName().equals(type))
        .map(Command::commandId)
        .toList();
  }

  @DatabaseTest
  void theDailyTickQueuesItsCommandsWithinTheirCapsAndPurgesOldClaims() {
    for (int i = 0; i < 12; i++) {
      project("arch-" + i, "archived", i);
    }
    for (int i = 0; i < 12; i++) {
      project("act-" + i, "active", i);
    }
    index("act-0", "ready");
    index("act-1", "failed"); // not ready: still needs a backfill
    long old = DAILY.minus(Duration.ofDays(14)).minusSeconds(1).toEpochMilli();
    long fresh = DAILY.minus(Duration.ofDays(13)).toEpochMilli();
    database.inTransaction(
        tx -> {
          for (int i = 0; i < 5_010; i++) {
            tx.update(
                "INSERT INTO processed_events (consumer, event_id, processed_at_ms) VALUES (?, ?, ?)",
                "causal-router",
                "old-" + i,
                old);
          }
          tx.update(
              "INSERT INTO processed_events (consumer, event_id, processed_at_ms) VALUES (?, ?, ?)",
              "causal-router",
              "fresh",
              fresh);
          return null;
        });

    MaintenanceReport report = maintenance.runDaily(DAILY);

    assertThat(sentIds("forks.sweep")).containsExactly("cmd_forks.sweep_2026-12-02");
    assertThat(sentIds("project.cleanup")).hasSize(10).allMatch(id -> id.contains("arch-"));
    assertThat(sentIds("index.purge")).hasSize(10).allMatch(id -> id.contains("arch-"));
    assertThat(sentIds("index.build"))
        .hasSize(10)
        .doesNotContain("cmd_index.build_act-0_backfill_2026-12-02")
        .contains("cmd_index.build_act-1_backfill_2026-12-02");
    assertThat(report.purge("processed_events").orElseThrow().deleted()).isEqualTo(5_010);
    long left = database.read(tx -> tx.queryLong("SELECT COUNT(*) FROM processed_events"));
    assertThat(left).as("every old row goes, the fresh one stays").isEqualTo(1);
  }

  @DatabaseTest
  void theReleaseSweepRecoversSettlesClosesAndPurgesWithinItsCaps() {
    project("p", "active", 0);
    for (int i = 0; i < 12; i++) {
      change("rel-" + i, "p", "releasing", SWEEP, SWEEP.minus(Duration.ofMinutes(46)));
    }
    change("rel-recent", "p", "releasing", SWEEP, SWEEP.minus(Duration.ofMinutes(44)));
    change("quiet-ok", "p", "open", SWEEP.minus(Duration.ofMinutes(4)), null);
    change("quiet-young", "p", "open", SWEEP.minus(Duration.ofMinutes(2)), null);
    change("quiet-old", "p", "verifying", SWEEP.minus(Duration.ofHours(7)), null);
    change("quiet-busy", "p", "open", SWEEP.minus(Duration.ofMinutes(10)), null);
    change("ended", "p", "completed", SWEEP.minus(Duration.ofMinutes(10)), null);
    database.inTransaction(
        tx -> {
          tx.update(
              "INSERT INTO tasks (task_id, change_id, project_id, state, created_at_ms,"
                  + " updated_at_ms) VALUES ('t-busy', 'quiet-busy', 'p', 'running', 0, 0)");
          for (String[] dl :
              new String[][] {{"cmd_a", "ended"}, {"cmd_b", "quiet-ok"}, {"cmd_c", "ended"}}) {
            tx.update(
                "INSERT INTO dead_letters (command_id, kind, command, reason, change_id,"
                    + " created_at_ms) VALUES (?, 'command', '{}', 'boom', ?, 0)",
                dl[0],
                dl[1]);
          }
          return null;
        });
    project("gone", "deleted", 0);
    project("gone-clean", "deleted", 0);
    index("gone", "ready");

    MaintenanceReport report = maintenance.runReleaseSweep(SWEEP);

    assertThat(sentIds("release.recover")).hasSize(10).noneMatch(id -> id.contains("rel-recent"));
    assertThat(sentIds("change.settle"))
        .containsExactly("cmd_quiet-ok_settle_" + SWEEP.getEpochSecond() / 60);
    assertThat(report.deadLettersClosed()).isEqualTo(2);
    List<String> open =
        database.read(
            tx ->
                tx.query(
                    "SELECT command_id FROM dead_letters WHERE status = 'open'",
                    rs -> rs.getString(1)));
    assertThat(open).containsExactly("cmd_b");
    assertThat(sentIds("index.purge"))
        .containsExactly("cmd_index.purge_gone_" + SWEEP.getEpochSecond() / 60);
    assertThat(report.failedSends()).isEmpty();
  }

  @DatabaseTest
  void aFailedSendIsReportedAndTheOtherCommandsStillGo() {
    project("arch", "archived", 0);
    Maintenance failing =
        new Maintenance(
            database,
            c -> {
              if (c.commandType().wireName().equals("forks.sweep")) {
                throw new IllegalStateException("queue unreachable");
              }
              sent.add(c);
            },
            deadLetters(database, new SettableClock(SWEEP)),
            Settings.defaults());
    MaintenanceReport report = failing.runDaily(DAILY);
    assertThat(report.failedSends())
        .extracting(Command::commandId)
        .containsExactly("cmd_forks.sweep_2026-12-02");
    assertThat(report.sentTypes()).containsExactly("project.cleanup", "index.purge");
  }
}
