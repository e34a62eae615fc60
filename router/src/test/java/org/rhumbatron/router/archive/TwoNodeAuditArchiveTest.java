package org.rhumbatron.router.archive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.bucket.BucketObject;
import org.rhumbatron.platform.bucket.NatsObjectStoreBucket;
import org.rhumbatron.platform.cluster.Duty;
import org.rhumbatron.platform.cluster.FreezableClock;
import org.rhumbatron.platform.cluster.LeasedOwnership;
import org.rhumbatron.platform.cluster.TestNodes;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.router.EventLogFixture;
import org.rhumbatron.router.claims.EventClaims;
import org.rhumbatron.router.run.BatchOutcome;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * Two archivers of two nodes on one PostgreSQL database, one nats-server and one object store,
 * handing a stream over while one of them is a zombie between its put and its claims: every Event
 * ends in exactly one archive object.
 */
class TwoNodeAuditArchiveTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.postgres();

  private static final Subscription SUB = Subscription.AUDIT_ARCHIVER;
  private static final Instant AT = Instant.parse("2026-03-04T05:06:07.089Z");
  // Records a zombie fetched come back to the new holder after this.
  private static final Settings SHORT_ACK_WAIT =
      Settings.defaults().with(Settings.ROUTER_ACK_WAIT, Duration.ofSeconds(1));

  private final SettableClock clock = new SettableClock(Instant.parse("2026-03-04T06:00:00Z"));
  private final List<AutoCloseable> open = new ArrayList<>();
  private final ExecutorService zombieThreads = Executors.newCachedThreadPool();
  private Node a;
  private Node b;
  private int stream;
  private String project;

  /** A bucket whose first put, once written, waits for {@link #resume}: a process paused there. */
  private static final class PausedAfterPut implements Bucket {
    private final Bucket inner;
    private final CountDownLatch written = new CountDownLatch(1);
    private final CountDownLatch resumed = new CountDownLatch(1);
    private volatile boolean pauses;

    PausedAfterPut(Bucket inner) {
      this.inner = inner;
    }

    void pauseAfterNextPut() {
      pauses = true;
    }

    void awaitWritten() throws InterruptedException {
      assertThat(written.await(20, TimeUnit.SECONDS)).as("the put was written").isTrue();
    }

    void resume() {
      resumed.countDown();
    }

    @Override
    public String name() {
      return inner.name();
    }

    @Override
    public void put(String key, byte[] bytes) {
      inner.put(key, bytes);
      if (pauses) {
        pauses = false;
        written.countDown();
        try {
          resumed.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }

    @Override
    public Optional<byte[]> get(String key) {
      return inner.get(key);
    }

    @Override
    public List<BucketObject> list(String prefix) {
      return inner.list(prefix);
    }

    @Override
    public boolean delete(String key) {
      return inner.delete(key);
    }
  }

  private record Node(
      LeasedOwnership ownership,
      EventLogFixture log,
      PausedAfterPut bucket,
      AuditArchiver archiver) {
    List<EventRecord> fetch(int stream, int count) {
      return log.fetch(stream, SUB, count);
    }
  }

  private Node node(String id, java.time.Clock leaseClock) throws Exception {
    Database db = Database.open(database.database().url());
    open.add(db);
    LeasedOwnership ownership = TestNodes.ownership(db, id, leaseClock);
    open.add(ownership);
    EventLogFixture log = new EventLogFixture(nats.url(), SHORT_ACK_WAIT);
    open.add(log);
    PausedAfterPut bucket =
        new PausedAfterPut(NatsObjectStoreBucket.open(log.connection(), Bucket.EVIDENCE, clock));
    return new Node(
        ownership,
        log,
        bucket,
        new AuditArchiver(bucket, log.codec(), db, new EventClaims(clock, ownership)));
  }

  private final FreezableClock aTime = new FreezableClock();

  @BeforeEach
  void start() throws Exception {
    a = node("node-a", aTime);
    b = node("node-b", java.time.Clock.systemUTC());
    TestNodes.startSharing(a.ownership(), b.ownership());
    project = TestNodes.projectHeldBy(a.ownership(), "p-arc");
    stream = EventStreams.streamIndex(project);
  }

  @AfterEach
  void stop() throws Exception {
    a.bucket().resume();
    b.bucket().resume();
    zombieThreads.shutdownNow();
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
  }

  private List<Event> publish(int n, int from) throws Exception {
    List<Event> events = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Event e = EventLogFixture.event(EventType.TASK_COMPLETED, project, AT.plusSeconds(from + i));
      a.log().publish(stream, e);
      events.add(e);
    }
    return events;
  }

  /** {@code node} archives {@code batch} on a thread of its own, pausing after its put. */
  private CompletableFuture<BatchOutcome> archiveUntilPaused(Node node, List<EventRecord> batch)
      throws InterruptedException {
    node.bucket().pauseAfterNextPut();
    CompletableFuture<BatchOutcome> outcome =
        CompletableFuture.supplyAsync(() -> node.archiver().handle(stream, batch), zombieThreads);
    node.bucket().awaitWritten();
    return outcome;
  }

  /** {@code a} is paused past its lease: {@code b} holds the stream. */
  private void pauseAPastItsLease() {
    a.ownership().suspend();
    aTime.freeze(); // its work went on past its last look at the lease
    await()
        .atMost(TestNodes.LEASE.plusSeconds(10))
        .until(() -> b.ownership().owns(Duty.stream(stream)));
  }

  /** How many archive objects hold each Event id. */
  private Map<String, Integer> objectsPerEvent() throws Exception {
    Map<String, Integer> count = new HashMap<>();
    for (BucketObject o : a.bucket().list(ArchiveKey.PREFIX)) {
      for (String line : AuditArchiveContract.lines(a.bucket().get(o.key()).orElseThrow())) {
        count.merge(a.log().codec().decodeEvent(line).eventId(), 1, Integer::sum);
      }
    }
    return count;
  }

  private void assertEachArchivedOnce(List<Event> events) throws Exception {
    assertThat(objectsPerEvent())
        .as("every Event in exactly one archive object")
        .isEqualTo(events.stream().collect(Collectors.toMap(Event::eventId, e -> 1)));
  }

  @Test
  void aZombiesObjectWhoseClaimsAreFencedGoesAndTheNewHoldersOtherBatchHoldsItsEvents()
      throws Exception {
    List<Event> events = new ArrayList<>(publish(4, 0));
    CompletableFuture<BatchOutcome> zombie = archiveUntilPaused(a, a.fetch(stream, 4));

    pauseAPastItsLease();
    events.addAll(publish(2, 4));
    // The zombie's 4 come back after their ack wait, in one batch with the 2 new ones.
    assertThat(b.archiver().handle(stream, b.fetch(stream, 6)).allRecordsApplied()).isTrue();
    a.bucket().resume();

    assertThat(zombie.get(20, TimeUnit.SECONDS).allRecordsApplied()).isFalse();
    assertThat(a.ownership().owns(Duty.stream(stream))).as("the zombie stepped down").isFalse();
    assertEachArchivedOnce(events);
  }

  @Test
  void aZombieWithdrawingItsObjectLeavesTheNewHoldersObjectOfTheSameBatch() throws Exception {
    List<Event> events = publish(4, 0);
    CompletableFuture<BatchOutcome> zombie = archiveUntilPaused(a, a.fetch(stream, 4));

    pauseAPastItsLease();
    // The same 4 records, the same batch, archived by the new holder up to its claims.
    CompletableFuture<BatchOutcome> holder = archiveUntilPaused(b, b.fetch(stream, 4));
    a.bucket().resume();
    assertThat(zombie.get(20, TimeUnit.SECONDS).allRecordsApplied()).isFalse();
    b.bucket().resume();

    assertThat(holder.get(20, TimeUnit.SECONDS).allRecordsApplied()).isTrue();
    assertEachArchivedOnce(events);
  }

  @Test
  void aNodeThatTookTheStreamBackClaimsNothingOfABatchItReadBeforeItLostIt() throws Exception {
    List<Event> events = new ArrayList<>(publish(4, 0));
    long before = a.ownership().epoch(Duty.stream(stream)).orElseThrow();
    CompletableFuture<BatchOutcome> zombie = archiveUntilPaused(a, a.fetch(stream, 4));

    pauseAPastItsLease();
    events.addAll(publish(2, 4));
    assertThat(b.archiver().handle(stream, b.fetch(stream, 6)).allRecordsApplied()).isTrue();
    // Resumed, the node is the stream's pick again: it takes it back at a later epoch.
    aTime.thaw();
    a.ownership().resume();
    await()
        .atMost(TestNodes.LEASE.plusSeconds(10))
        .until(() -> a.ownership().epoch(Duty.stream(stream)).map(e -> e > before).orElse(false));
    a.bucket().resume();

    assertThat(zombie.get(20, TimeUnit.SECONDS).allRecordsApplied()).isFalse();
    assertEachArchivedOnce(events);
    assertThat(a.ownership().owns(Duty.stream(stream)))
        .as("it holds the stream again, at its new epoch")
        .isTrue();
  }

  @Test
  void anObjectOfANodeKilledBeforeItsClaimsGoesWhenTheNewHolderArchivesItsBatch() throws Exception {
    List<Event> events = publish(4, 0);
    archiveUntilPaused(a, a.fetch(stream, 4)); // and never resumed before the check: killed

    pauseAPastItsLease();
    List<EventRecord> again = b.fetch(stream, 4);
    assertThat(again).allSatisfy(r -> assertThat(r.deliveredCount()).isEqualTo(2));
    assertThat(b.archiver().handle(stream, again).allRecordsApplied()).isTrue();

    assertEachArchivedOnce(events);
  }
}
