package org.rhumbatron.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.PublishAck;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsMessage;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.coordinator.shard.ResourceShardActor;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.EventLogTransport;
import org.rhumbatron.platform.eventlog.JetStreamEventLog;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;
import org.rhumbatron.workload.LatencyStats;

/**
 * The outbox benchmark: state changes committed per second (each one transaction with one Event)
 * with their Events published, beside raw JetStream async publish of the same payload size in the
 * same run, and commit-to-PubAck latency at half the measured maximum rate.
 */
final class OutboxBench {
  private static final int RAW_WINDOW = 100;
  private static final int MAX_IN_FLIGHT = 4_000;
  private static final String RAW_STREAM_PREFIX = "BENCH_RAW_";
  private static final String RAW_SUBJECT_PREFIX = "bench.raw.";

  private final String natsUrl;
  private final String dbUrl;
  private final int count;
  private final int actors;
  private final int latencySeconds;
  private final int rounds;
  private final Duration warmup;
  private final boolean inProcessAcks;
  private final Clock clock = Clock.systemUTC();

  OutboxBench(
      String natsUrl,
      String dbUrl,
      int count,
      int actors,
      int latencySeconds,
      int rounds,
      Duration warmup,
      boolean inProcessAcks) {
    this.natsUrl = natsUrl;
    this.dbUrl = dbUrl;
    this.count = count;
    this.actors = actors;
    this.latencySeconds = latencySeconds;
    this.rounds = rounds;
    this.warmup = warmup;
    this.inProcessAcks = inProcessAcks;
  }

  /**
   * Commit-to-PubAck times of one latency phase. Each pair becomes a sample as soon as both ends
   * are known and leaves the maps, so the bench does not keep every timestamp alive for the GC.
   */
  private static final class Latencies {
    /** The end of a pair seen first: its commit or its PubAck. */
    private record End(boolean commit, long nanos) {}

    private final Map<String, End> firstEnds = new ConcurrentHashMap<>();
    private final long[] samples;
    private final AtomicInteger count = new AtomicInteger();

    Latencies(int capacity) {
      this.samples = new long[capacity];
    }

    void committed(String eventId, long nanos) {
      end(eventId, new End(true, nanos));
    }

    void acked(String eventId, long nanos) {
      end(eventId, new End(false, nanos));
    }

    /** The second end of a pair records the sample and removes the first (atomically per id). */
    private void end(String eventId, End end) {
      firstEnds.compute(
          eventId,
          (id, first) -> {
            if (first == null) {
              return end;
            }
            add(end.commit() ? first.nanos() - end.nanos() : end.nanos() - first.nanos());
            return null;
          });
    }

    private void add(long nanos) {
      int i = count.getAndIncrement();
      if (i < samples.length) {
        samples[i] = Math.max(0, nanos);
      }
    }

    long[] samples() {
      return Arrays.copyOf(samples, Math.min(count.get(), samples.length));
    }
  }

  /** Counts PubAcks, and hands their arrival times to the latency phase's recorder. */
  private static final class TimedTransport implements EventLogTransport {
    final EventLogTransport inner;
    volatile Latencies latencies;
    final AtomicLong acked = new AtomicLong();

    TimedTransport(EventLogTransport inner) {
      this.inner = inner;
    }

    @Override
    public Set<Integer> boundStreams() {
      return inner.boundStreams();
    }

    @Override
    public boolean isConnected() {
      return inner.isConnected();
    }

    @Override
    public CompletableFuture<Long> publish(
        int streamIndex, String msgId, byte[] body, String expectedLastMsgId) {
      return inner
          .publish(streamIndex, msgId, body, expectedLastMsgId)
          .whenComplete(
              (seq, error) -> {
                if (error == null) {
                  Latencies l = latencies;
                  if (l != null) {
                    l.acked(msgId, System.nanoTime());
                  }
                  acked.incrementAndGet();
                }
              });
    }

    @Override
    public long lastSequence(int streamIndex) {
      return inner.lastSequence(streamIndex);
    }

    @Override
    public Optional<String> messageIdAt(int streamIndex, long seq) {
      return inner.messageIdAt(streamIndex, seq);
    }

    @Override
    public long fillReadPastSequences(int streamIndex, long recordedUpTo) {
      return inner.fillReadPastSequences(streamIndex, recordedUpTo);
    }
  }

  String run() throws Exception {
    Settings settings = Settings.defaults();
    try (Connection nats = JetStreamConnections.connect(natsUrl, "rhumbatron-bench");
        Database db = Database.open(dbUrl)) {
      new JetStreamTopology(nats, settings).ensure();
      TimedTransport transport =
          new TimedTransport(inProcessAcks ? new InProcessAcks() : JetStreamEventLog.bind(nats));
      int payloadBytes = new EnvelopeCodec().encodeEvent(event("p-bench-0", 0)).length;
      try (Coordinator coordinator =
          Coordinator.wiring()
              .database(db)
              .transport(transport)
              .clock(clock)
              .settings(settings)
              .wire()) {
        List<ResourceShardActor> writers = new ArrayList<>();
        for (int i = 0; i < actors; i++) {
          writers.add(coordinator.shard("p-bench-" + i, 0));
        }
        long[] seq = {0};
        List<String> rawSubjects = createRawStreams(nats);
        List<Double> raws = new ArrayList<>();
        List<Double> outboxes = new ArrayList<>();
        try {
          // Warm up the JIT, the connections and the database on both paths at full size, in
          // turn, at least twice and for the warm-up time: the JIT compiles for seconds (C2 took
          // 23% of the CPU samples of a 30 s run), and a round taken meanwhile measures it.
          long warmUntil = System.nanoTime() + warmup.toNanos();
          int passes = 0;
          do {
            commitAndPublish(writers, transport, count, seq, 0, null);
            rawPublishRate(nats, rawSubjects, count, payloadBytes);
            passes++;
          } while (passes < 2 || System.nanoTime() < warmUntil);
          // Rounds alternate raw and outbox, so both see the same machine; medians of each.
          for (int r = 0; r < rounds; r++) {
            raws.add(rawPublishRate(nats, rawSubjects, count, payloadBytes));
            outboxes.add(commitAndPublish(writers, transport, count, seq, 0, null));
          }
        } finally {
          deleteRawStreams(nats);
        }
        double rawRate = BenchRounds.median(raws);
        double outbox = BenchRounds.median(outboxes);
        double halfRate = outbox / 2;
        int latencyCount = (int) Math.max(100, halfRate * latencySeconds);
        Latencies latencies = new Latencies(latencyCount);
        transport.latencies = latencies;
        commitAndPublish(writers, transport, latencyCount, seq, halfRate, latencies);
        transport.latencies = null;
        long[] samples = latencies.samples();
        ObjectMapper json = new ObjectMapper();
        ObjectNode out = json.createObjectNode();
        out.put("bench", "outbox");
        out.put("database", db.dialect().name());
        out.put("nats", natsUrl);
        // In-process acks: the outbox path alone, no NATS; ratio and latency are not the targets'.
        out.put("acks", inProcessAcks ? "in-process" : "nats");
        out.put("state_changes", count);
        out.put("warmup_seconds", warmup.toSeconds());
        out.put("actors", actors);
        out.put("payload_bytes", payloadBytes);
        out.put("outbox_commits_published_per_s", round(outbox));
        out.put("raw_async_publish_per_s", round(rawRate));
        out.put("raw_window", RAW_WINDOW);
        out.put("ratio", BenchRounds.ratio(outbox, rawRate));
        BenchRounds.put(out, "outbox_per_s", outboxes);
        BenchRounds.put(out, "raw_per_s", raws);
        ObjectNode latency = out.putObject("commit_to_puback_ms");
        latency.put("offered_per_s", round(halfRate));
        LatencyStats.put(latency, samples, 50, 90, 95, 99);
        return json.writerWithDefaultPrettyPrinter().writeValueAsString(out);
      }
    }
  }

  /**
   * Commits {@code n} state changes round-robin over the writers (at most {@code ratePerSec} per
   * second when positive) and waits until all their Events are acknowledged; returns the rate.
   */
  private double commitAndPublish(
      List<ResourceShardActor> writers,
      TimedTransport transport,
      int n,
      long[] seq,
      double ratePerSec,
      Latencies latencies)
      throws InterruptedException {
    Semaphore inFlight = new Semaphore(MAX_IN_FLIGHT);
    long ackedBefore = transport.acked.get();
    long start = System.nanoTime();
    for (int i = 0; i < n; i++) {
      if (ratePerSec > 0) {
        // Sleep, not spin: a spinning thread would take one of the machine's two cores.
        long due = start + (long) (i * 1e9 / ratePerSec);
        long wait;
        while ((wait = due - System.nanoTime()) > 0) {
          java.util.concurrent.locks.LockSupport.parkNanos(wait);
        }
      }
      inFlight.acquire();
      ResourceShardActor writer = writers.get(i % writers.size());
      long k = seq[0]++;
      String projectId = "p-bench-" + (i % writers.size());
      Event event = event(projectId, k);
      var encoded = writer.encode(event); // as a caller that knows its Event before the commit
      writer
          .change(
              (tx, out) -> {
                tx.update(
                    "INSERT INTO actor_state (actor_class, actor_id, state_key, state_value,"
                        + " version, updated_at_ms) VALUES (?, ?, 'counter', ?, 1, ?)"
                        + " ON CONFLICT (actor_class, actor_id, state_key) DO UPDATE SET"
                        + " state_value = excluded.state_value, version = actor_state.version + 1,"
                        + " updated_at_ms = excluded.updated_at_ms",
                    ResourceShardActor.ACTOR_CLASS,
                    writer.address().actorId(),
                    Long.toString(k),
                    clock.millis());
                out.append(encoded);
                return null;
              })
          .whenComplete(
              (r, e) -> {
                if (latencies != null) {
                  latencies.committed(event.eventId(), System.nanoTime());
                }
                inFlight.release();
                if (e != null) {
                  System.err.println("bench: a state change failed: " + e);
                }
              });
    }
    while (transport.acked.get() - ackedBefore < n) {
      Thread.sleep(1);
    }
    long elapsed = System.nanoTime() - start;
    return n / (elapsed / 1e9);
  }

  /**
   * One stream per event stream, with its configuration (storage, limits, duplicate window) but its
   * own name and subject: raw publishes to the event streams themselves would move their last msg
   * id under the outbox publisher, and its expected-last-msg-id sends would be refused.
   */
  private static List<String> createRawStreams(Connection nats) throws Exception {
    JetStreamManagement jsm = nats.jetStreamManagement();
    List<String> subjects = new ArrayList<>();
    for (int i = 0; i < EventStreams.STREAM_COUNT; i++) {
      StreamConfiguration events = jsm.getStreamInfo(EventStreams.streamName(i)).getConfiguration();
      String subject = RAW_SUBJECT_PREFIX + i;
      jsm.addStream(
          StreamConfiguration.builder(events)
              .name(RAW_STREAM_PREFIX + i)
              .subjects(subject)
              .build());
      subjects.add(subject);
    }
    return subjects;
  }

  private static void deleteRawStreams(Connection nats) throws Exception {
    JetStreamManagement jsm = nats.jetStreamManagement();
    for (int i = 0; i < EventStreams.STREAM_COUNT; i++) {
      jsm.deleteStream(RAW_STREAM_PREFIX + i);
    }
  }

  private double rawPublishRate(Connection nats, List<String> subjects, int n, int payloadBytes)
      throws Exception {
    JetStream js = nats.jetStream();
    byte[] body = new byte[payloadBytes];
    Arrays.fill(body, (byte) 'x');
    long start = System.nanoTime();
    List<CompletableFuture<PublishAck>> window = new ArrayList<>(RAW_WINDOW);
    for (int i = 0; i < n; i++) {
      NatsMessage m =
          NatsMessage.builder()
              .subject(subjects.get(i % subjects.size()))
              .headers(
                  new Headers()
                      .put(org.rhumbatron.protocol.Headers.MSG_ID, StableIds.randomEventId()))
              .data(body)
              .build();
      window.add(js.publishAsync(m));
      if (window.size() == RAW_WINDOW) {
        CompletableFuture.allOf(window.toArray(CompletableFuture[]::new)).join();
        window.clear();
      }
    }
    CompletableFuture.allOf(window.toArray(CompletableFuture[]::new)).join();
    return n / ((System.nanoTime() - start) / 1e9);
  }

  private Event event(String projectId, long k) {
    return Event.builder()
        .eventId(StableIds.randomEventId(clock.instant()))
        .eventType(EventType.TASK_COMPLETED)
        .tenantId("tenant-bench")
        .projectId(projectId)
        .changeId("c-" + projectId)
        .taskId("t-" + k)
        .actor("bench")
        .correlationId("c-" + projectId)
        .timestamp(clock.instant())
        .build();
  }

  private static long round(double v) {
    return Math.round(v);
  }
}
