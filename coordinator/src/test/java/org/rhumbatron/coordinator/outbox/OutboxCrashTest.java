package org.rhumbatron.coordinator.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rhumbatron.coordinator.CoordinatorFixture;
import org.rhumbatron.coordinator.NumberedEvents;
import org.rhumbatron.coordinator.OutboxRows;
import org.rhumbatron.coordinator.StreamContents;
import org.rhumbatron.coordinator.outbox.CrashingWriter.CrashPoint;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.db.TestDatabases;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * Core dies at the outbox's two crash points, for real: {@link CrashingWriter} runs in a child JVM
 * on the test's database and nats-server and halts itself (a) after commit before publish, (b)
 * after a PubAck before the row is marked published. A new Coordinator on the same database and
 * server then does what core does at start ({@code recover()}), and every Event must be in its
 * stream exactly once, in outbox order, none missing.
 */
class OutboxCrashTest {
  private static final int PROJECTS = 4;
  private static final int EVENTS_PER_PROJECT = 110;
  private static final int ROWS = PROJECTS * (1 + EVENTS_PER_PROJECT);

  /** Past the first batches (100 rows), so the crash finds rows in all three states. */
  private static final int HALT_AT_ACK = 150;

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  @ParameterizedTest
  @EnumSource(TestDatabase.Kind.class)
  void killedAfterCommitBeforePublish(TestDatabase.Kind kind) throws Exception {
    try (TestDatabase db = TestDatabases.create(kind)) {
      String prefix = "crash-commit-" + kind.name().toLowerCase();
      String output = runWriter(db, CrashPoint.AFTER_COMMIT, prefix);
      assertThat(output).contains("KILLED after commit, before publish");

      try (CoordinatorFixture f = restart(db)) {
        List<OutboxRows.Row> rows = OutboxRows.all(f.db);
        assertThat(rows).as("every commit survived the kill").hasSize(ROWS);
        assertThat(rows)
            .as("nothing was sent before the kill")
            .allMatch(r -> r.state().equals("pending"));
        assertThat(onStream(f, prefix)).as("the streams are empty").isEmpty();

        assertThat(f.coordinator.recover()).as("publishing resumed at start").isPositive();
        awaitAllPublished(f);
        assertEachEventOnceInOrder(f, prefix);
      }
    }
  }

  @ParameterizedTest
  @EnumSource(TestDatabase.Kind.class)
  void killedAfterPubAckBeforeMarkedPublished(TestDatabase.Kind kind) throws Exception {
    try (TestDatabase db = TestDatabases.create(kind)) {
      String prefix = "crash-puback-" + kind.name().toLowerCase();
      String output = runWriter(db, CrashPoint.AFTER_PUBACK, prefix);
      assertThat(output).contains("KILLED on PubAck " + HALT_AT_ACK);

      try (CoordinatorFixture f = restart(db)) {
        List<OutboxRows.Row> rows = OutboxRows.all(f.db);
        assertThat(rows).hasSize(ROWS);
        Map<String, Long> before = onStream(f, prefix);
        assertThat(before.values()).as("no duplicate before the restart").allMatch(c -> c == 1);
        assertThat(before).hasSizeGreaterThanOrEqualTo(HALT_AT_ACK);
        List<OutboxRows.Row> storedNotMarked =
            rows.stream()
                .filter(r -> !r.state().equals("published") && before.containsKey(r.eventId()))
                .toList();
        assertThat(storedNotMarked)
            .as("the kill hit the window between PubAck and the row update")
            .isNotEmpty();
        assertThat(rows)
            .as("some rows were never sent")
            .anyMatch(r -> r.state().equals("pending") && !before.containsKey(r.eventId()));

        Map<String, Long> storedAt = sequencesOnStreams(f);

        f.coordinator.recover();
        awaitAllPublished(f);
        assertEachEventOnceInOrder(f, prefix);
        // Sent again, they were the server's duplicates: each row has its first message's sequence.
        Map<String, Long> seqAfter =
            OutboxRows.all(f.db).stream()
                .collect(Collectors.toMap(OutboxRows.Row::eventId, OutboxRows.Row::streamSeq));
        for (OutboxRows.Row r : storedNotMarked) {
          assertThat(seqAfter.get(r.eventId()))
              .as(r.eventId())
              .isEqualTo(storedAt.get(r.eventId()));
        }
      }
    }
  }

  private CoordinatorFixture restart(TestDatabase db) throws Exception {
    return CoordinatorFixture.start(
        db.url(), nats.url(), new SettableClock(Instant.now()), Settings.defaults());
  }

  /** Runs {@link CrashingWriter} in a child JVM; returns its output once it has died. */
  private String runWriter(TestDatabase db, CrashPoint point, String prefix) throws Exception {
    Path out = Files.createTempFile("crashing-writer-", ".log");
    try {
      List<String> command =
          List.of(
              Path.of(System.getProperty("java.home"), "bin", "java").toString(),
              "-cp",
              System.getProperty("java.class.path"),
              CrashingWriter.class.getName(),
              db.url(),
              nats.url(),
              point.name(),
              prefix,
              Integer.toString(PROJECTS),
              Integer.toString(EVENTS_PER_PROJECT),
              Integer.toString(HALT_AT_ACK));
      Process child =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(out.toFile())
              .start();
      if (!child.waitFor(60, TimeUnit.SECONDS)) {
        child.destroyForcibly().waitFor();
        throw new AssertionError("the writer did not die within 60 s:\n" + read(out));
      }
      String output = read(out);
      System.out.println("--- output of the CrashingWriter child JVM ---\n" + output + "---");
      assertThat(child.exitValue())
          .as("exit code of the writer; its output:\n%s", output)
          .isEqualTo(CrashingWriter.KILLED);
      assertThat(output).contains("COMMITTED " + ROWS);
      return output;
    } finally {
      Files.deleteIfExists(out);
    }
  }

  private static String read(Path file) throws IOException {
    return Files.readString(file, StandardCharsets.UTF_8);
  }

  private static void awaitAllPublished(CoordinatorFixture f) {
    await().atMost(Duration.ofSeconds(30)).until(() -> OutboxRows.unpublished(f.db) == 0);
  }

  /** The stream sequence of every message on the event streams, by its Nats-Msg-Id. */
  private static Map<String, Long> sequencesOnStreams(CoordinatorFixture f) {
    Map<String, Long> seqs = new java.util.HashMap<>();
    for (int stream : f.transport.boundStreams()) {
      for (long seq = 1; seq <= f.transport.lastSequence(stream); seq++) {
        long at = seq;
        f.transport.messageIdAt(stream, seq).ifPresent(id -> seqs.put(id, at));
      }
    }
    return seqs;
  }

  /** How many times each event id of the prefix's projects is on their streams. */
  private static Map<String, Long> onStream(CoordinatorFixture f, String prefix) throws Exception {
    List<Event> events = new ArrayList<>();
    for (String p : NumberedEvents.projects(prefix, PROJECTS)) {
      events.addAll(StreamContents.eventsOf(f.nats, p));
    }
    return events.stream().collect(Collectors.groupingBy(Event::eventId, Collectors.counting()));
  }

  /**
   * Each project's stream holds its project.created once and its numbered Events once each, in
   * commit order; nothing is missing and nothing else is there.
   */
  private static void assertEachEventOnceInOrder(CoordinatorFixture f, String prefix)
      throws Exception {
    Map<String, Long> counts = onStream(f, prefix);
    assertThat(counts.entrySet())
        .as("every Event is on its stream exactly once")
        .allMatch(e -> e.getValue() == 1);
    Set<String> rowIds =
        OutboxRows.all(f.db).stream().map(OutboxRows.Row::eventId).collect(Collectors.toSet());
    Set<String> missing = new HashSet<>(rowIds);
    missing.removeAll(counts.keySet());
    Set<String> extra = new HashSet<>(counts.keySet());
    extra.removeAll(rowIds);
    assertThat(missing).as("committed Events missing from the streams").isEmpty();
    assertThat(extra).as("Events on the streams that no row committed").isEmpty();
    for (String p : NumberedEvents.projects(prefix, PROJECTS)) {
      List<Event> events = StreamContents.eventsOf(f.nats, p);
      assertThat(events)
          .filteredOn(e -> e.eventType().wireName().equals("project.created"))
          .hasSize(1);
      assertThat(events.stream().map(NumberedEvents::numberOf).filter(n -> n >= 0))
          .as("the Change Events of %s, in commit order", p)
          .containsExactlyElementsOf(IntStream.range(0, EVENTS_PER_PROJECT).boxed().toList());
      assertThat(events.stream().filter(e -> NumberedEvents.numberOf(e) >= 0).map(Event::eventId))
          .containsExactlyElementsOf(
              IntStream.range(0, EVENTS_PER_PROJECT)
                  .mapToObj(n -> NumberedEvents.idOf(p, n))
                  .toList());
    }
    assertThat(rowIds).hasSize(ROWS);
  }
}
