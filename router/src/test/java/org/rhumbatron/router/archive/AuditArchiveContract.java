package org.rhumbatron.router.archive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.bucket.BucketObject;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.DatabaseOptions;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.router.EventLogFixture;
import org.rhumbatron.router.claims.EventClaims;
import org.rhumbatron.router.run.BatchOutcome;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * The audit archiver and the object expiry on real fetched batches; run against the directory
 * bucket and the NATS object store bucket.
 */
abstract class AuditArchiveContract {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension sqlite = DatabaseExtension.sqlite();

  static final int STREAM = 3;
  static final Instant AT = Instant.parse("2026-03-04T05:06:07.089Z");
  static final Subscription SUB = Subscription.AUDIT_ARCHIVER;

  final SettableClock clock = new SettableClock(Instant.parse("2026-03-04T06:00:00Z"));
  EventLogFixture log;
  Bucket bucket;
  AuditArchiver archiver;
  Database db;

  abstract Bucket open(EventLogFixture log, SettableClock clock) throws Exception;

  /** Makes every later put of {@link #bucket} fail. */
  abstract void breakBucket() throws Exception;

  @BeforeEach
  void start() throws Exception {
    log = new EventLogFixture(nats.url());
    bucket = open(log, clock);
    db = Database.open(sqlite.database().url(), DatabaseOptions.builder().clock(clock).build());
    archiver = new AuditArchiver(bucket, log.codec(), db, new EventClaims(clock));
  }

  @AfterEach
  void stop() throws Exception {
    log.close();
    db.close();
  }

  private List<Event> publish(int n) throws Exception {
    List<Event> events = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Event e = EventLogFixture.event(EventType.TASK_COMPLETED, "p-arc", AT.plusSeconds(i));
      log.publish(STREAM, e);
      events.add(e);
    }
    return events;
  }

  @Test
  void aBatchIsOneGzipNdjsonObjectUnderTheSeedsKeyWithItsEnvelopesInStreamOrder() throws Exception {
    List<Event> events = publish(3);
    List<EventRecord> batch = log.fetch(STREAM, SUB, 3);

    assertThat(archiver.handle(STREAM, batch).allRecordsApplied()).isTrue();

    String hash = ArchiveKey.hash(events.stream().map(Event::eventId).toList());
    String key =
        "events/2026/03/04/stream-03/part-" + AT.toEpochMilli() + "-" + hash + ".ndjson.gz";
    assertThat(bucket.list("")).extracting(BucketObject::key).containsExactly(key);
    assertThat(hash).matches("[0-9a-f]{16}");
    List<String> lines = lines(bucket.get(key).orElseThrow());
    assertThat(lines).hasSize(3);
    assertThat(lines.stream().map(l -> log.codec().decodeEvent(l)).toList())
        .containsExactlyElementsOf(events);
  }

  /**
   * An archived Event is the bytes its stream holds, one line each; one published across several
   * lines (another writer's pretty-printed JSON) is written on one line, as the codec writes it.
   */
  @Test
  void anEnvelopeIsArchivedAsPublishedAndOnOneLine() throws Exception {
    Event compact = EventLogFixture.event(EventType.TASK_COMPLETED, "p-arc", AT);
    Event spread = EventLogFixture.event(EventType.TASK_COMPLETED, "p-arc", AT.plusSeconds(1));
    // One line, yet not the codec's bytes: a space after the opening brace.
    byte[] compactBytes =
        ("{ " + new String(log.codec().encodeEvent(compact), StandardCharsets.UTF_8).substring(1))
            .getBytes(StandardCharsets.UTF_8);
    log.publishRaw(STREAM, compact.eventId(), compactBytes);
    log.publishRaw(
        STREAM,
        spread.eventId(),
        new ObjectMapper()
            .writerWithDefaultPrettyPrinter()
            .writeValueAsBytes(new ObjectMapper().readTree(log.codec().encodeEvent(spread))));
    List<EventRecord> batch = log.fetch(STREAM, SUB, 2);
    assertThat(batch).allMatch(EventRecord::decoded);

    assertThat(archiver.handle(STREAM, batch).allRecordsApplied()).isTrue();

    List<String> lines = lines(bucket.get(bucket.list("").get(0).key()).orElseThrow());
    assertThat(lines).hasSize(2);
    assertThat(lines.get(0).getBytes(StandardCharsets.UTF_8)).isEqualTo(compactBytes);
    assertThat(log.codec().decodeEvent(lines.get(1))).isEqualTo(spread);
  }

  /**
   * A core killed between its put and its claims left an object; the batch came back with more
   * records fetched, so under another key. Once its claims commit, the object of the dead put goes
   * and each Event is in one object.
   */
  @Test
  void theObjectOfAPutWhoseClaimsNeverCameGoesWhenItsBatchComesBackWithMore() throws Exception {
    List<Event> events = publish(3);
    List<EventRecord> first = log.fetch(STREAM, SUB, 3);
    String orphan = ArchiveKey.of(STREAM, first);
    bucket.put(orphan, new ArchiveLines(log.codec()).gzip(first)); // the put; no claims followed
    first.forEach(r -> r.nak(Duration.ZERO));
    events.addAll(publish(2));

    List<EventRecord> again = log.fetch(STREAM, SUB, 5);
    assertThat(again).hasSize(5);
    assertThat(archiver.handle(STREAM, again).allRecordsApplied()).isTrue();

    List<BucketObject> objects = bucket.list("");
    assertThat(objects).extracting(BucketObject::key).doesNotContain(orphan).hasSize(1);
    assertThat(
            lines(bucket.get(objects.get(0).key()).orElseThrow()).stream()
                .map(l -> log.codec().decodeEvent(l))
                .toList())
        .containsExactlyElementsOf(events);
  }

  /**
   * A core killed between its put and its claims left an object of five records; they come back
   * split in two smaller batches, so no later object covers it whole. Its put's intent, never
   * forgotten, has the next batch delete it: each Event ends in one object.
   */
  @Test
  void theObjectOfAPutWhoseClaimsNeverCameGoesWhenItsBatchComesBackSplit() throws Exception {
    List<Event> events = publish(5);
    List<EventRecord> five = log.fetch(STREAM, SUB, 5);
    AuditArchiver killedAfterPut =
        new AuditArchiver(new KilledAfterPut(bucket), log.codec(), db, new EventClaims(clock));
    assertThatThrownBy(() -> killedAfterPut.handle(STREAM, five)).isInstanceOf(Killed.class);
    assertThat(bucket.list("")).as("the dead put's object").hasSize(1);
    five.forEach(r -> r.nak(Duration.ZERO));

    List<EventRecord> three = log.fetch(STREAM, SUB, 3);
    assertThat(three).hasSize(3);
    assertThat(archiver.handle(STREAM, three).allRecordsApplied()).isTrue();
    List<EventRecord> two = log.fetch(STREAM, SUB, 2);
    assertThat(two).hasSize(2);
    assertThat(archiver.handle(STREAM, two).allRecordsApplied()).isTrue();

    assertThat(archivedIds())
        .as("every Event in the archive once")
        .containsExactlyInAnyOrderElementsOf(events.stream().map(Event::eventId).toList());
  }

  /** The process dies right after a put: nothing after it runs. */
  private static final class Killed extends Error {
    Killed() {
      super("killed after the put");
    }
  }

  private record KilledAfterPut(Bucket bucket) implements Bucket {
    @Override
    public String name() {
      return bucket.name();
    }

    @Override
    public void put(String key, byte[] bytes) {
      bucket.put(key, bytes);
      throw new Killed();
    }

    @Override
    public java.util.Optional<byte[]> get(String key) {
      return bucket.get(key);
    }

    @Override
    public List<BucketObject> list(String prefix) {
      return bucket.list(prefix);
    }

    @Override
    public boolean delete(String key) {
      return bucket.delete(key);
    }
  }

  /** An object that holds a record outside the batch may hold the only copy of it: it stays. */
  @Test
  void anObjectWithARecordOutsideTheBatchStays() throws Exception {
    publish(3);
    List<EventRecord> three = log.fetch(STREAM, SUB, 3);
    String other = ArchiveKey.of(STREAM, three);
    bucket.put(other, new ArchiveLines(log.codec()).gzip(three));
    three.forEach(r -> r.nak(Duration.ZERO));

    List<EventRecord> two = log.fetch(STREAM, SUB, 2);
    assertThat(two).hasSize(2);
    assertThat(archiver.handle(STREAM, two).allRecordsApplied()).isTrue();

    assertThat(bucket.list("")).extracting(BucketObject::key).contains(other).hasSize(2);
  }

  @Test
  void aRedeliveredBatchLeavesItsOneObjectAsItWas() throws Exception {
    publish(4);
    List<EventRecord> first = log.fetch(STREAM, SUB, 4);
    archiver.handle(STREAM, first);
    BucketObject written = bucket.list("").get(0);
    byte[] content = bucket.get(written.key()).orElseThrow();

    clock.advance(Duration.ofMinutes(5));
    List<EventRecord> again = log.redeliver(STREAM, SUB, first);
    assertThat(again).allSatisfy(r -> assertThat(r.deliveredCount()).isEqualTo(2));
    assertThat(archiver.handle(STREAM, again).allRecordsApplied()).isTrue();

    List<BucketObject> after = bucket.list("");
    assertThat(after).extracting(BucketObject::key).containsExactly(written.key());
    assertThat(after.get(0).uploadedAt()).as("not written again").isEqualTo(written.uploadedAt());
    assertThat(bucket.get(written.key()).orElseThrow()).isEqualTo(content);
  }

  @Test
  void recordsWhoseAckWasLostComingBackInAnotherBatchAreNotArchivedTwice() throws Exception {
    List<Event> events = publish(4);
    List<EventRecord> first = log.fetch(STREAM, SUB, 2);
    assertThat(archiver.handle(STREAM, first).allRecordsApplied()).isTrue();
    first.forEach(r -> r.nak(Duration.ofMillis(1))); // the ack was lost: they come back

    List<EventRecord> mixed = log.fetch(STREAM, SUB, 4);
    assertThat(mixed).extracting(EventRecord::streamSequence).containsExactly(1L, 2L, 3L, 4L);
    assertThat(archiver.handle(STREAM, mixed).allRecordsApplied()).isTrue();

    assertThat(archivedIds())
        .as("every Event in the archive once")
        .containsExactlyInAnyOrderElementsOf(events.stream().map(Event::eventId).toList());
    assertThat(bucket.list("")).hasSize(2);
  }

  @Test
  void anObjectWhoseClaimsFailIsWithdrawnSoItsBatchComingBackOtherwiseIsArchivedOnce()
      throws Exception {
    List<Event> events = publish(4);
    try (java.sql.Connection c = sqlite.database().connect();
        java.sql.Statement st = c.createStatement()) {
      // A full disk: the claims cannot be written, the bucket (elsewhere) still can.
      st.execute(
          "CREATE TRIGGER full BEFORE INSERT ON processed_events"
              + " BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END");
      List<EventRecord> first = log.fetch(STREAM, SUB, 2);
      assertThat(archiver.handle(STREAM, first).allRecordsApplied()).isFalse();
      assertThat(bucket.list("")).as("withdrawn").isEmpty();
      first.forEach(r -> r.nak(Duration.ofMillis(1)));
      st.execute("DROP TRIGGER full");
    }
    List<EventRecord> mixed = log.fetch(STREAM, SUB, 4);
    assertThat(archiver.handle(STREAM, mixed).allRecordsApplied()).isTrue();

    assertThat(archivedIds())
        .as("every Event in the archive once")
        .containsExactlyInAnyOrderElementsOf(events.stream().map(Event::eventId).toList());
  }

  @Test
  void aBatchLeftUnackedByACrashComesBackAfterTheAckWaitToTheSameObject() throws Exception {
    Settings shortAckWait =
        Settings.defaults().with(Settings.ROUTER_ACK_WAIT, Duration.ofSeconds(1));
    publish(3);
    EventLogFixture beforeCrash = new EventLogFixture(nats.url(), shortAckWait);
    List<EventRecord> first = beforeCrash.fetch(STREAM, SUB, 3);
    archiver.handle(STREAM, first);
    String key = bucket.list("").get(0).key();
    byte[] content = bucket.get(key).orElseThrow();
    beforeCrash.close(); // the crash: the archive object is written, the batch never acked

    try (EventLogFixture afterRestart = new EventLogFixture(nats.url(), shortAckWait)) {
      List<EventRecord> again = afterRestart.fetch(STREAM, SUB, 3);
      assertThat(again).allSatisfy(r -> assertThat(r.deliveredCount()).isEqualTo(2));
      assertThat(archiver.handle(STREAM, again).allRecordsApplied()).isTrue();
    }
    assertThat(bucket.list("")).extracting(BucketObject::key).containsExactly(key);
    assertThat(bucket.get(key).orElseThrow()).isEqualTo(content);
  }

  @Test
  void aMalformedRecordIsArchivedWithItsRawBytesNotLost() throws Exception {
    List<Event> events = publish(1);
    byte[] garbage = "{\"eventId\": 42, not json".getBytes(StandardCharsets.UTF_8);
    log.publishRaw(STREAM, "evt_0000000000000000000000000000beef", garbage);
    List<EventRecord> batch = log.fetch(STREAM, SUB, 2);

    assertThat(archiver.handle(STREAM, batch).allRecordsApplied()).isTrue();

    BucketObject object = bucket.list("").get(0);
    String hash =
        ArchiveKey.hash(List.of(events.get(0).eventId(), "evt_0000000000000000000000000000beef"));
    assertThat(object.key()).endsWith("part-" + AT.toEpochMilli() + "-" + hash + ".ndjson.gz");
    List<String> lines = lines(bucket.get(object.key()).orElseThrow());
    assertThat(log.codec().decodeEvent(lines.get(0))).isEqualTo(events.get(0));
    JsonNode wrapper = new ObjectMapper().readTree(lines.get(1));
    assertThat(wrapper.get("malformed").asBoolean()).isTrue();
    assertThat(wrapper.get("streamSequence").asLong()).isEqualTo(batch.get(1).streamSequence());
    assertThat(wrapper.get("messageId").asText()).isEqualTo("evt_0000000000000000000000000000beef");
    assertThat(wrapper.get("error").asText()).isEqualTo(batch.get(1).decodeError().getMessage());
    assertThat(Base64.getDecoder().decode(wrapper.get("dataBase64").asText())).isEqualTo(garbage);
  }

  @Test
  void aBatchWithNoDecodableEventIsKeyedByTheTimeTheStreamStoredIt() throws Exception {
    log.publishRaw(
        STREAM, "evt_00000000000000000000000000000001", "x".getBytes(StandardCharsets.UTF_8));
    log.publishRaw(
        STREAM, "evt_00000000000000000000000000000002", "[]".getBytes(StandardCharsets.UTF_8));
    List<EventRecord> batch = log.fetch(STREAM, SUB, 2);

    assertThat(archiver.handle(STREAM, batch).allRecordsApplied()).isTrue();

    Instant stored = batch.get(0).storedAt();
    String day = stored.atZone(ZoneOffset.UTC).toLocalDate().toString().replace('-', '/');
    assertThat(bucket.list(""))
        .extracting(BucketObject::key)
        .containsExactly(
            ArchiveKey.key(
                STREAM,
                stored,
                List.of(
                    "evt_00000000000000000000000000000001",
                    "evt_00000000000000000000000000000002")));
    assertThat(bucket.list("").get(0).key()).startsWith("events/" + day + "/stream-03/");
    assertThat(lines(bucket.get(bucket.list("").get(0).key()).orElseThrow())).hasSize(2);
  }

  @Test
  void anEmptyBatchWritesNothing() {
    assertThat(archiver.handle(STREAM, List.of()).allRecordsApplied()).isTrue();
    assertThat(bucket.list("")).isEmpty();
  }

  /** A bucket out of reach is not the Events' fault: not a failure that could dead-letter them. */
  @Test
  void aBucketThatFailsLeavesTheWholeBatchWaitingWithTheKeyInTheReason() throws Exception {
    publish(2);
    List<EventRecord> batch = log.fetch(STREAM, SUB, 2);
    breakBucket();

    BatchOutcome outcome = archiver.handle(STREAM, batch);

    assertThat(outcome.waiting()).containsExactlyElementsOf(batch);
    assertThat(outcome.failed()).isEmpty();
    assertThat(outcome.deferred()).isEmpty();
    assertThat(outcome.unavailable())
        .startsWith("cannot archive 2 records to events/2026/03/04/stream-03/part-");
  }

  @Test
  void theExpiryDeletesOnlyArchiveObjectsUploadedMoreThan365DaysAgo() throws Exception {
    Instant now = clock.instant();
    clock.set(now.minus(Duration.ofDays(366)));
    bucket.put("events/2025/old/part-366", new byte[] {1});
    bucket.put("other/not-an-archive", new byte[] {1});
    clock.set(now.minus(Duration.ofDays(365)));
    bucket.put("events/2025/old/part-365-exactly", new byte[] {1});
    clock.set(now.minus(Duration.ofDays(364)));
    bucket.put("events/2025/old/part-364", new byte[] {1});
    clock.set(now);
    publish(1);
    archiver.handle(STREAM, log.fetch(STREAM, SUB, 1));

    int deleted = new ArchiveExpiry(bucket, clock, Settings.defaults()).expire();

    assertThat(deleted).isEqualTo(1);
    assertThat(bucket.list(""))
        .extracting(BucketObject::key)
        .doesNotContain("events/2025/old/part-366")
        .contains(
            "events/2025/old/part-365-exactly", "events/2025/old/part-364", "other/not-an-archive")
        .hasSize(4);
    clock.advance(Duration.ofDays(2));
    assertThat(new ArchiveExpiry(bucket, clock, Settings.defaults()).expire())
        .as("two days later the 365 and 364 day old ones are over the line")
        .isEqualTo(2);
  }

  /** The Event ids of every archive object, as often as they are archived. */
  private List<String> archivedIds() throws Exception {
    List<String> archived = new ArrayList<>();
    for (BucketObject o : bucket.list("")) {
      for (String line : lines(bucket.get(o.key()).orElseThrow())) {
        archived.add(log.codec().decodeEvent(line).eventId());
      }
    }
    return archived;
  }

  static List<String> lines(byte[] gzip) throws Exception {
    try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(gzip))) {
      String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      assertThat(text).endsWith("\n");
      return Arrays.asList(text.substring(0, text.length() - 1).split("\n", -1));
    }
  }
}
