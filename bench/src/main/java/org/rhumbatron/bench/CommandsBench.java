package org.rhumbatron.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PullSubscribeOptions;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.PublishAck;
import io.nats.client.api.RetentionPolicy;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.impl.Headers;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.platform.queue.HandlerRuns;
import org.rhumbatron.platform.queue.JetStreamCommandTransport;
import org.rhumbatron.platform.queue.Outcome;
import org.rhumbatron.platform.queue.QueueConsumer;
import org.rhumbatron.platform.queue.QueueRuntime;
import org.rhumbatron.platform.queue.QueueTimings;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.DeadLetterMessage;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.server.QueueConsumers;

/**
 * The queue benchmark: commands per second through runQueueConsumer with a no-op handler (decode,
 * handler, ack, ack extension armed), for one queue (agent-wakeups, with its row of {@link
 * QueueConsumers}) and for all six queues at once, beside raw fetch + ack of a bare pull consumer
 * on a bare work-queue stream in the same run, with the same fetch batch and payload. Each phase
 * preloads its messages and times the first handled message to the last.
 */
final class CommandsBench {
  private static final int PUBLISH_WINDOW = 500;
  private static final int WARM_ROUNDS = 4;
  private static final String RAW_STREAM = "BENCH_RAW";
  private static final String RAW_SUBJECT = "bench.raw";
  private static final Duration FETCH_WAIT = Duration.ofMillis(250);

  private final String natsUrl;
  private final int count;
  private final Clock clock = Clock.systemUTC();
  private final EnvelopeCodec codec = new EnvelopeCodec();

  CommandsBench(String natsUrl, int count) {
    this.natsUrl = natsUrl;
    this.count = count;
  }

  /** Counts handled messages and the monotonic time of the first and the last. */
  private static final class Meter {
    final long target;
    final AtomicLong handled = new AtomicLong();
    volatile long firstNanos;
    volatile long lastNanos;

    Meter(long target) {
      this.target = target;
    }

    Outcome tick() {
      long n = handled.incrementAndGet();
      long now = System.nanoTime();
      if (n == 1) {
        firstNanos = now;
      }
      if (n == target) {
        lastNanos = now;
      }
      return Outcome.ack();
    }

    double await() throws InterruptedException {
      while (handled.get() < target) {
        Thread.sleep(1);
      }
      return rate(target, lastNanos - firstNanos);
    }
  }

  String run() throws Exception {
    Settings settings = Settings.defaults();
    try (Connection nats = JetStreamConnections.connect(natsUrl, "rhumbatron-bench")) {
      JetStreamManagement jsm = nats.jetStreamManagement();
      new JetStreamTopology(nats, settings).ensure();
      refuseBusyServer(jsm);
      Commands commands = new Commands(new JetStreamCommandTransport(nats), codec);
      QueueRuntime runtime =
          new QueueRuntime(
              nats,
              commands,
              codec,
              QueueTimings.from(settings),
              clock,
              HandlerRuns.serverCount()); // no database; first deliveries write nothing anyway
      QueueConsumers.Row one = QueueConsumers.row(Queue.AGENT_WAKEUPS);
      byte[] sample = codec.encodeCommand(command(CommandType.AGENT_WAKE, 0));
      try {
        // Warm up the JIT (the decode path needs tens of thousands of calls) and the connections.
        for (int i = 0; i < WARM_ROUNDS; i++) {
          oneQueue(runtime, commands, count, "warm");
        }
        double raw = rawFetchAck(nats, jsm, count, one.batchSize(), sample);
        double single = oneQueue(runtime, commands, count, "one");
        double all = allQueues(runtime, commands, count);
        // Each measured twice, around the all-queues phase, so that a noisy neighbour (the
        // machine is shared) weighs on both sides alike.
        double singleAgain = oneQueue(runtime, commands, count, "one");
        double rawAgain = rawFetchAck(nats, jsm, count, one.batchSize(), sample);
        double singleFirst = single;
        single = (single + singleAgain) / 2;
        double rawRate = (raw + rawAgain) / 2;
        ObjectMapper json = new ObjectMapper();
        ObjectNode out = json.createObjectNode();
        out.put("bench", "commands");
        out.put("nats", natsUrl);
        out.put("commands_per_phase", count);
        out.put("payload_bytes", sample.length);
        out.put("one_queue", one.queue().wireName());
        out.put("one_queue_batch", one.batchSize());
        out.put("one_queue_concurrency", one.concurrency());
        out.put("one_queue_commands_per_s", round(single));
        out.put("all_queues_commands_per_s", round(all));
        out.put("raw_fetch_ack_per_s", round(rawRate));
        out.put("raw_fetch_batch", one.batchSize());
        out.putArray("one_queue_runs_per_s").add(round(singleFirst)).add(round(singleAgain));
        out.putArray("raw_runs_per_s").add(round(raw)).add(round(rawAgain));
        out.put("ratio", Math.round(single / rawRate * 1000) / 1000.0);
        out.put("ratio_all_queues", Math.round(all / rawRate * 1000) / 1000.0);
        return json.writerWithDefaultPrettyPrinter().writeValueAsString(out);
      } finally {
        cleanUp(jsm);
      }
    }
  }

  /** The bench uses the real COMMANDS stream and q-<queue> consumers: not beside a running core. */
  private static void refuseBusyServer(JetStreamManagement jsm)
      throws IOException, JetStreamApiException {
    var info = jsm.getStreamInfo(Queue.STREAM_NAME);
    if (info.getStreamState().getMsgCount() > 0 || info.getStreamState().getConsumerCount() > 0) {
      throw new IllegalStateException(
          "bench commands needs a NATS server without a running core: stream COMMANDS holds "
              + info.getStreamState().getMsgCount()
              + " messages and "
              + info.getStreamState().getConsumerCount()
              + " consumers");
    }
  }

  private double oneQueue(QueueRuntime runtime, Commands commands, int n, String tag)
      throws Exception {
    Meter meter = new Meter(n);
    preload(commands, Queue.AGENT_WAKEUPS, n, tag);
    try (QueueConsumer<Command> c =
        runtime.runQueueConsumer(
            QueueConsumers.of(Queue.AGENT_WAKEUPS), (cmd, d) -> meter.tick(), null)) {
      return meter.await();
    }
  }

  private double allQueues(QueueRuntime runtime, Commands commands, int n) throws Exception {
    int per = n / Queue.values().length;
    Meter meter = new Meter((long) per * Queue.values().length);
    for (Queue q : Queue.values()) {
      preload(commands, q, per, "all");
    }
    List<AutoCloseable> consumers = new ArrayList<>();
    try {
      for (Queue q : Queue.values()) {
        consumers.add(
            q == Queue.DEAD_LETTER
                ? runtime.runDeadLetterConsumer(QueueConsumers.of(q), (dl, d) -> meter.tick(), null)
                : runtime.runQueueConsumer(QueueConsumers.of(q), (cmd, d) -> meter.tick(), null));
      }
      return meter.await();
    } finally {
      for (AutoCloseable c : consumers) {
        c.close();
      }
    }
  }

  private void preload(Commands commands, Queue queue, int n, String tag) {
    List<CompletableFuture<?>> window = new ArrayList<>(PUBLISH_WINDOW);
    CommandType type = typeOn(queue);
    for (int i = 0; i < n; i++) {
      if (queue == Queue.DEAD_LETTER) {
        DeadLetterMessage dl =
            new DeadLetterMessage(Queue.INTEGRATION, 4, "bench", "{}", clock.instant());
        window.add(commands.sendDeadLetter(dl, uniqueSeq.incrementAndGet()));
      } else {
        window.add(commands.sendTo(queue, command(type, uniqueSeq.incrementAndGet())));
      }
      if (window.size() == PUBLISH_WINDOW) {
        CompletableFuture.allOf(window.toArray(CompletableFuture[]::new)).join();
        window.clear();
      }
    }
    CompletableFuture.allOf(window.toArray(CompletableFuture[]::new)).join();
  }

  private final AtomicLong uniqueSeq = new AtomicLong(System.nanoTime());

  private double rawFetchAck(
      Connection nats, JetStreamManagement jsm, int n, int batch, byte[] body) throws Exception {
    jsm.addStream(
        StreamConfiguration.builder()
            .name(RAW_STREAM)
            .subjects(RAW_SUBJECT)
            .retentionPolicy(RetentionPolicy.WorkQueue)
            .storageType(StorageType.File)
            .build());
    try {
      JetStream js = nats.jetStream();
      List<CompletableFuture<PublishAck>> window = new ArrayList<>(PUBLISH_WINDOW);
      for (int i = 0; i < n; i++) {
        Headers h =
            new Headers()
                .put(org.rhumbatron.protocol.Headers.MSG_ID, "raw:" + uniqueSeq.incrementAndGet());
        window.add(js.publishAsync(RAW_SUBJECT, h, body));
        if (window.size() == PUBLISH_WINDOW) {
          CompletableFuture.allOf(window.toArray(CompletableFuture[]::new)).join();
          window.clear();
        }
      }
      CompletableFuture.allOf(window.toArray(CompletableFuture[]::new)).join();
      jsm.addOrUpdateConsumer(
          RAW_STREAM,
          ConsumerConfiguration.builder()
              .durable("raw")
              .ackPolicy(AckPolicy.Explicit)
              .filterSubject(RAW_SUBJECT)
              .build());
      JetStreamSubscription sub =
          js.subscribe(RAW_SUBJECT, PullSubscribeOptions.bind(RAW_STREAM, "raw"));
      long acked = 0;
      long first = 0;
      while (acked < n) {
        for (Message m : sub.fetch(batch, FETCH_WAIT)) {
          if (first == 0) {
            first = System.nanoTime();
          }
          m.ack();
          acked++;
        }
      }
      long last = System.nanoTime();
      sub.unsubscribe();
      return rate(n, last - first);
    } finally {
      jsm.deleteStream(RAW_STREAM);
    }
  }

  private void cleanUp(JetStreamManagement jsm) {
    for (Queue q : Queue.values()) {
      try {
        jsm.deleteConsumer(Queue.STREAM_NAME, q.durableName());
      } catch (IOException | JetStreamApiException e) {
        // never created in this run
      }
    }
  }

  private Command command(CommandType type, long k) {
    return Command.builder()
        .commandId("cmd_bench_" + k)
        .commandType(type)
        .projectId("p-bench")
        .changeId("c-bench")
        .taskId("t-bench")
        .createdAt(clock.instant())
        .build();
  }

  private static CommandType typeOn(Queue queue) {
    for (CommandType t : CommandType.values()) {
      if (t.queue() == queue) {
        return t;
      }
    }
    return CommandType.AGENT_WAKE; // dead-letter: not used
  }

  private static double rate(long n, long nanos) {
    return n / (Math.max(1, nanos) / 1e9);
  }

  private static long round(double v) {
    return Math.round(v);
  }
}
