package org.rhumbatron.platform.queue;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;

/** {@link DatabaseHandlerRuns} on each database: the same counts from the same SQL. */
class HandlerRunsTest {
  private final SettableClock clock = new SettableClock(Instant.parse("2026-04-01T12:00:00Z"));
  private Database database;
  private DatabaseHandlerRuns runs;

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  @BeforeEach
  void open() {
    database = Database.open(db().url());
    runs = new DatabaseHandlerRuns(database, clock, Duration.ofDays(14));
  }

  @AfterEach
  void close() {
    database.close();
  }

  private long rows() {
    return database.read(tx -> tx.queryLong("SELECT COUNT(*) FROM queue_handler_runs"));
  }

  @DatabaseTest
  void aFirstDeliveryIsRunOneAndWritesNothing() {
    assertThat(runs.countRun(Queue.INTEGRATION, 7, 1)).isEqualTo(1);
    assertThat(rows()).isZero();
  }

  @DatabaseTest
  void eachRedeliveryCountsOneRunWhateverTheServerCounted() {
    assertThat(runs.countRun(Queue.INTEGRATION, 7, 9)).isEqualTo(2);
    assertThat(runs.countRun(Queue.INTEGRATION, 7, 15)).isEqualTo(3);
    assertThat(runs.countRun(Queue.RELEASE, 7, 2)).isEqualTo(2); // another queue's message
    assertThat(runs.countRun(Queue.INTEGRATION, 8, 2)).isEqualTo(2);
    runs.settled(Queue.INTEGRATION, 7);
    assertThat(rows()).isEqualTo(2);
    assertThat(runs.countRun(Queue.INTEGRATION, 7, 16)).isEqualTo(2);
  }

  @DatabaseTest
  void thePurgeDropsOnlyTheQueuesRowsOlderThanTheStreamsMaxAge() {
    runs.countRun(Queue.INTEGRATION, 1, 2);
    runs.countRun(Queue.RELEASE, 2, 2);
    clock.advance(Duration.ofDays(10));
    runs.countRun(Queue.INTEGRATION, 3, 2);
    clock.advance(Duration.ofDays(5));
    runs.purgeExpired(Queue.INTEGRATION);
    assertThat(rows()).isEqualTo(2);
    assertThat(runs.countRun(Queue.INTEGRATION, 3, 3)).isEqualTo(3);
    assertThat(runs.countRun(Queue.INTEGRATION, 1, 3)).isEqualTo(2);
  }
}
