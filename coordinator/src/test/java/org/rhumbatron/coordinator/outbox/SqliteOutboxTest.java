package org.rhumbatron.coordinator.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.coordinator.CoordinatorFixture;
import org.rhumbatron.coordinator.OutboxRows;
import org.rhumbatron.coordinator.StreamContents;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.db.TestDatabase;

class SqliteOutboxTest extends OutboxContract {
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.sqlite();

  @Override
  TestDatabase db() {
    return database.database();
  }

  /**
   * A run in which every send was acknowledged records its rows without waiting for the commit.
   * Held here by a transaction that keeps SQLite's writer busy: the runs after it send none of
   * those rows again (a repeat would be acknowledged as a duplicate and counted), and once the
   * writer is free every row is published, each event once on the stream.
   */
  @Test
  void rowsWhoseOutcomeWaitsForTheWriterAreNotSentAgain(TestInfo info) throws Exception {
    CoordinatorFixture f = start();
    String p = project(info);
    int stream = EventStreams.streamIndex(p);
    OutboxPublisher publisher = f.coordinator.publisher();
    f.coordinator.root(p).createProject("tenant-1", "Demo").join();
    await().atMost(Duration.ofSeconds(10)).until(() -> publisher.publishedCount() == 1);

    publisher.pause(); // the next rows wait until the writer is held
    List<Event> events =
        IntStream.range(0, 5).mapToObj(i -> f.changeEvent(p, "c1", "t1", i)).toList();
    f.coordinator.changeEvents().appendChangeEvents(p, "c1", events).join();
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<Object> holding = holdWriter(f, release);
    publisher.resume();
    publisher.kick(stream);
    await().atMost(Duration.ofSeconds(10)).until(() -> publisher.publishedCount() == 6);
    for (int i = 0; i < 5; i++) {
      publisher.kick(stream);
    }
    // A run on the lane after the kicked ones: it reads the five rows, still pending in the
    // database, sends nothing, and so has nothing to record.
    OutboxPublisher.PublishRun last = publisher.publishDueOnLane(stream).get(10, TimeUnit.SECONDS);
    assertThat(last.published()).isZero();
    assertThat(publisher.publishedCount()).as("no row sent twice while recorded").isEqualTo(6);
    assertThat(rows(f, p)).filteredOn(r -> r.state().equals("pending")).hasSize(5);

    release.countDown();
    holding.get(10, TimeUnit.SECONDS);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> rows(f, p).stream().allMatch(r -> r.state().equals("published")));
    publisher.publishDueOnLane(stream).get(10, TimeUnit.SECONDS);
    assertThat(publisher.publishedCount()).isEqualTo(6);
    assertThat(StreamContents.eventIdsOf(f.nats, p)).hasSize(6).doesNotHaveDuplicates();
  }

  /**
   * An actor does not wait for a commit before it queues its next transaction: while SQLite's
   * writer is held, ten appends to one shard are all queued at once, then commit in the order they
   * were called, each with its Event once.
   */
  @Test
  void anActorQueuesItsNextTransactionBeforeTheLastCommitsAndKeepsTheirOrder(TestInfo info)
      throws Exception {
    CoordinatorFixture f = start();
    String p = project(info);
    f.coordinator.root(p).createProject("tenant-1", "Demo").join();
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<Object> holding = holdWriter(f, release);
    List<Event> events =
        IntStream.range(0, 10).mapToObj(i -> f.changeEvent(p, "c1", "t1", i)).toList();
    List<CompletableFuture<Integer>> appends =
        events.stream()
            .map(e -> f.coordinator.changeEvents().appendChangeEvents(p, "c1", List.of(e)))
            .toList();
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(f.db.queuedWrites()).isGreaterThanOrEqualTo(events.size()));
    assertThat(appends).noneMatch(CompletableFuture::isDone);

    release.countDown();
    holding.get(10, TimeUnit.SECONDS);
    for (CompletableFuture<Integer> a : appends) {
      assertThat(a.get(10, TimeUnit.SECONDS)).isEqualTo(1);
    }
    assertThat(rows(f, p).stream().map(OutboxRows.Row::eventId).skip(1))
        .containsExactlyElementsOf(events.stream().map(Event::eventId).toList());
  }

  /** A transaction that keeps SQLite's one writer until {@code release} (at most 20 s). */
  private static CompletableFuture<Object> holdWriter(
      CoordinatorFixture f, CountDownLatch release) {
    return f.db.inTransactionAsync(
        tx -> {
          try {
            return release.await(20, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
        });
  }
}
