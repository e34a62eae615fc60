package org.rhumbatron.coordinator.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.rhumbatron.coordinator.CoordinatorFixture;
import org.rhumbatron.coordinator.LogCapture;
import org.rhumbatron.coordinator.NumberedEvents;
import org.rhumbatron.coordinator.OutboxRows;
import org.rhumbatron.coordinator.StreamContents;
import org.rhumbatron.faults.NatsStoreDamage;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.db.TestDatabases;
import org.rhumbatron.testkit.nats.NatsServer;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * nats-server acknowledged a tail of a stream that a crash then lost. The test SIGKILLs the server,
 * cuts the last messages off the stream's newest block file, and restarts it. Core must find the
 * published rows whose message is gone (the stream ends before them, or another message now has
 * their sequence) and publish them again with the same {@code Nats-Msg-Id}.
 */
class LostTailRepairTest {
  private static final int EVENTS = 30;
  private static final int LOST = 8;

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  final SettableClock clock = CoordinatorFixture.clockAt("2026-03-01T10:00:00Z");

  /**
   * Cases: the database, and how many Events of another project on the same stream are published
   * after the restart and before the repair (0: the stream simply ends before the kept rows; fewer
   * than the lost ones: some lost sequences are reused; more: all are reused).
   */
  static Stream<Arguments> cases() {
    return Stream.of(
        Arguments.of(TestDatabase.Kind.SQLITE, 0),
        Arguments.of(TestDatabase.Kind.SQLITE, 3),
        Arguments.of(TestDatabase.Kind.SQLITE, 12),
        Arguments.of(TestDatabase.Kind.POSTGRES, 3));
  }

  @ParameterizedTest(name = "{0}, {1} new events after the restart")
  @MethodSource("cases")
  void aLostTailIsPublishedAgainWithTheSameMsgId(TestDatabase.Kind kind, int newEvents)
      throws Exception {
    NatsServer server = nats.server();
    String prefix = "tail-" + kind.name().toLowerCase() + "-" + newEvents;
    String p = prefix + "-0";
    int stream = EventStreams.streamIndex(p);
    String q = NumberedEvents.projectOnStream(prefix + "-other", stream);
    String streamName = EventStreams.streamName(stream);
    try (TestDatabase db = TestDatabases.create(kind)) {
      // Project p publishes 1 + 30 Events and they are confirmed with their stream sequences.
      try (CoordinatorFixture before = start(db)) {
        publish(before, p, EVENTS);
        assertThat(OutboxRows.ofProject(before.db, p))
            .extracting(OutboxRows.Row::streamSeq)
            .containsExactlyElementsOf(
                IntStream.rangeClosed(1, EVENTS + 1).mapToObj(Long::valueOf).toList());
      }

      // The machine crashes: the server loses the last 8 acknowledged messages.
      server.kill();
      List<Long> cut = NatsStoreDamage.cutLastMessages(server.streamDir(streamName), LOST);
      server.restart();
      long lastSeq = EVENTS + 1 - LOST;
      assertThat(cut)
          .containsExactlyElementsOf(
              IntStream.rangeClosed((int) lastSeq + 1, EVENTS + 1)
                  .mapToObj(Long::valueOf)
                  .toList());

      try (CoordinatorFixture after = start(db)) {
        assertThat(after.transport.lastSequence(stream))
            .as("the server came back shorter")
            .isEqualTo(lastSeq);
        Set<String> lostIds =
            IntStream.range(EVENTS - LOST, EVENTS)
                .mapToObj(n -> NumberedEvents.idOf(p, n))
                .collect(Collectors.toSet());
        assertThat(StreamContents.eventIdsOf(after.nats, p)).doesNotContainAnyElementsOf(lostIds);

        // New messages take the lost sequences before core checks the stream.
        if (newEvents > 0) {
          clock.advance(Duration.ofMinutes(1));
          publish(after, q, newEvents - 1);
          assertThat(OutboxRows.ofProject(after.db, q))
              .extracting(OutboxRows.Row::streamSeq)
              .containsExactlyElementsOf(
                  IntStream.rangeClosed(1, newEvents)
                      .mapToObj(i -> Long.valueOf(lastSeq + i))
                      .toList());
        }

        clock.advance(Duration.ofMinutes(1));
        long repairedAt = clock.millis();
        try (LogCapture log = LogCapture.of(LostTailRepair.class)) {
          after.coordinator.recover();
          awaitAllPublished(after);
          assertThat(log.messages())
              .as("what the repair found")
              .containsExactly(
                  streamName
                      + " lost its tail: "
                      + LOST
                      + " published events (sequences "
                      + (lastSeq + 1)
                      + ".."
                      + (EVENTS + 1)
                      + ") go out again");
        }
        List<OutboxRows.Row> rows = OutboxRows.ofProject(after.db, p);
        assertThat(
                rows.stream()
                    .filter(r -> r.publishedAtMs() >= repairedAt)
                    .map(OutboxRows.Row::eventId))
            .as("the rows published again: exactly the lost ones")
            .containsExactlyInAnyOrderElementsOf(lostIds);
        assertThat(rows)
            .filteredOn(r -> lostIds.contains(r.eventId()))
            .as("sent again above every sequence handed out before: no reader sees one twice")
            .allSatisfy(
                r ->
                    assertThat(r.streamSeq())
                        .isGreaterThan(Math.max(EVENTS + 1, lastSeq + newEvents)));

        // On the stream: every Event of p and q exactly once, with Nats-Msg-Id = eventId
        // (StreamContents checks it), and p's Change Events in commit order.
        List<Event> pEvents = StreamContents.eventsOf(after.nats, p);
        Map<String, Long> counts =
            pEvents.stream().collect(Collectors.groupingBy(Event::eventId, Collectors.counting()));
        assertThat(counts.entrySet()).allMatch(e -> e.getValue() == 1);
        assertThat(counts.keySet())
            .isEqualTo(rows.stream().map(OutboxRows.Row::eventId).collect(Collectors.toSet()));
        assertThat(pEvents.stream().map(NumberedEvents::numberOf).filter(n -> n >= 0))
            .containsExactlyElementsOf(IntStream.range(0, EVENTS).boxed().toList());
        if (newEvents > 0) {
          assertThat(StreamContents.eventIdsOf(after.nats, q))
              .doesNotHaveDuplicates()
              .hasSize(newEvents);
        }
      }
    }
  }

  /**
   * The server acknowledged an Event, and then lost it, while the commit that records the row as
   * published still waited for the writer. The repair must not read the stream's rows before that
   * commit is in, or the row stays published at a sequence the stream no longer has.
   */
  @Test
  void anEventAcknowledgedButNotYetRecordedWhenTheTailIsLostIsPublishedAgain() throws Exception {
    NatsServer server = nats.server();
    String p = "tail-unrecorded-0";
    int stream = EventStreams.streamIndex(p);
    String streamName = EventStreams.streamName(stream);
    try (TestDatabase db = TestDatabases.create(TestDatabase.Kind.SQLITE);
        CoordinatorFixture f = start(db)) {
      publish(f, p, 5);
      long before = f.transport.lastSequence(stream);
      OutboxPublisher publisher = f.coordinator.publisher();

      // The next Event is committed while the publisher holds its sends.
      publisher.pause();
      Event last = NumberedEvents.event(p, 5, clock.instant());
      f.coordinator
          .changeEvents()
          .appendChangeEvents(p, NumberedEvents.changeOf(p), List.of(last))
          .join();

      // The writer is busy, so the publisher's record of the PubAck waits behind it.
      CountDownLatch writerHeld = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      CompletableFuture<Void> busyWriter =
          f.db.inTransactionAsync(
              tx -> {
                writerHeld.countDown();
                try {
                  release.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
                return null;
              });
      assertThat(writerHeld.await(10, TimeUnit.SECONDS)).isTrue();
      long sent = publisher.publishedCount();
      publisher.resume();
      publisher.kick(stream);
      await().atMost(Duration.ofSeconds(10)).until(() -> publisher.publishedCount() == sent + 1);
      assertThat(f.transport.lastSequence(stream)).isEqualTo(before + 1);

      // The server loses that message.
      server.kill();
      assertThat(NatsStoreDamage.cutLastMessages(server.streamDir(streamName), 1))
          .containsExactly(before + 1);
      server.restart();
      await()
          .atMost(Duration.ofSeconds(20))
          .ignoreExceptions()
          .until(() -> f.transport.lastSequence(stream) == before);

      CompletableFuture<Integer> recovered =
          CompletableFuture.supplyAsync(() -> f.coordinator.recover());
      try {
        recovered.get(2, TimeUnit.SECONDS);
      } catch (TimeoutException waitingForTheRecord) {
        // expected: the repair waits for the record
      }
      release.countDown();
      busyWriter.join();
      recovered.get(20, TimeUnit.SECONDS);
      awaitAllPublished(f);
      await()
          .atMost(Duration.ofSeconds(20))
          .untilAsserted(
              () ->
                  assertThat(StreamContents.eventIdsOf(f.nats, p))
                      .as("the lost Event is on the stream again, once")
                      .containsOnlyOnce(last.eventId()));
    }
  }

  /**
   * The connection came back from a server that lost a tail, and the reconnect's check has not run
   * yet (its listener runs on the client's own thread, after the connection is usable). A send then
   * would take a lost sequence that a reader (the project view) already saw on another Event, so
   * the publisher holds its sends until the check ran on this connection.
   */
  @Test
  void nothingIsSentOnAConnectionThatCameBackBeforeItsTailIsChecked() throws Exception {
    NatsServer server = nats.server();
    String p = "tail-early-0";
    int stream = EventStreams.streamIndex(p);
    String q = NumberedEvents.projectOnStream("tail-early-other", stream);
    try (TestDatabase db = TestDatabases.create(TestDatabase.Kind.SQLITE);
        CoordinatorFixture f = start(db)) {
      publish(f, p, 6);
      assertThat(f.coordinator.root(q).createProject("tenant-1", q).join()).isTrue();
      awaitAllPublished(f);
      long handedOut = f.transport.lastSequence(stream);
      f.recoverOnReconnect = false;

      server.kill();
      NatsStoreDamage.cutLastMessages(server.streamDir(EventStreams.streamName(stream)), 3);
      server.restart();
      await()
          .atMost(Duration.ofSeconds(20))
          .ignoreExceptions()
          .until(() -> f.transport.isConnected() && f.transport.lastSequence(stream) < handedOut);
      long shorter = f.transport.lastSequence(stream);
      assertThat(shorter).as("the server came back shorter").isLessThan(handedOut);

      Event next = NumberedEvents.event(q, 0, clock.instant());
      f.coordinator
          .changeEvents()
          .appendChangeEvents(q, NumberedEvents.changeOf(q), List.of(next))
          .join();
      // Two runs: the first send after the drop may be refused for its lost predecessor, and the
      // run after it reads the stream's tail again.
      for (int run = 1; run <= 2; run++) {
        assertThat(
                f.coordinator
                    .publisher()
                    .publishDueOnLane(stream)
                    .get(20, TimeUnit.SECONDS)
                    .published())
            .as("sent before the tail check, run %d", run)
            .isZero();
      }
      assertThat(f.transport.lastSequence(stream)).isEqualTo(shorter);

      f.coordinator.recover();
      awaitAllPublished(f);
      assertThat(OutboxRows.ofProject(f.db, q))
          .filteredOn(r -> r.eventId().equals(next.eventId()))
          .singleElement()
          .satisfies(
              r ->
                  assertThat(r.streamSeq())
                      .as("above every sequence handed out before the loss")
                      .isGreaterThan(handedOut));
    }
  }

  private CoordinatorFixture start(TestDatabase db) throws Exception {
    return CoordinatorFixture.start(db.url(), nats.url(), clock, Settings.defaults());
  }

  /** project.created and {@code events} numbered Change Events of {@code projectId}, published. */
  private void publish(CoordinatorFixture f, String projectId, int events) {
    assertThat(f.coordinator.root(projectId).createProject("tenant-1", projectId).join()).isTrue();
    List<Event> batch =
        IntStream.range(0, events)
            .mapToObj(n -> NumberedEvents.event(projectId, n, clock.instant()))
            .toList();
    for (Event e : batch) { // one transaction each, so the outbox order is the counter's order
      f.coordinator
          .changeEvents()
          .appendChangeEvents(projectId, NumberedEvents.changeOf(projectId), List.of(e))
          .join();
    }
    awaitAllPublished(f);
  }

  private static void awaitAllPublished(CoordinatorFixture f) {
    await().atMost(Duration.ofSeconds(20)).until(() -> OutboxRows.unpublished(f.db) == 0);
  }
}
