package org.rhumbatron.coordinator.outbox;

import io.nats.client.Connection;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.coordinator.NumberedEvents;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.EventLogTransport;
import org.rhumbatron.platform.eventlog.JetStreamEventLog;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.protocol.Event;

/**
 * The core process of {@link OutboxCrashTest}, run in a child JVM: builds a Coordinator on the
 * given database and nats-server, commits state changes, and dies by {@code halt(137)} (no shutdown
 * hooks, no finally blocks: as abrupt as SIGKILL for the process) at one crash point.
 *
 * <p>Arguments: {@code <dbUrl> <natsUrl> <AFTER_COMMIT|AFTER_PUBACK> <projectPrefix> <projects>
 * <eventsPerProject> <haltAtAck>}. Each project gets {@code createProject} (root outbox) and {@code
 * eventsPerProject} numbered Change Events, one transaction each (shard outbox).
 */
public final class CrashingWriter {
  public static final int KILLED = 137;

  /** Where the process dies. */
  public enum CrashPoint {
    /** Every state change committed, the publisher running, nothing sent yet. */
    AFTER_COMMIT,
    /** In the callback of the {@code haltAtAck}-th PubAck: stored, not yet marked published. */
    AFTER_PUBACK
  }

  private CrashingWriter() {}

  public static void main(String[] args) throws Exception {
    String dbUrl = args[0];
    String natsUrl = args[1];
    CrashPoint point = CrashPoint.valueOf(args[2]);
    String prefix = args[3];
    int projects = Integer.parseInt(args[4]);
    int eventsPerProject = Integer.parseInt(args[5]);
    int haltAtAck = Integer.parseInt(args[6]);
    try {
      run(dbUrl, natsUrl, point, prefix, projects, eventsPerProject, haltAtAck);
    } catch (Throwable t) {
      t.printStackTrace(System.out);
      System.out.flush();
      Runtime.getRuntime().halt(1);
    }
    System.out.println("NOT KILLED");
    System.out.flush();
    Runtime.getRuntime().halt(2);
  }

  private static void run(
      String dbUrl,
      String natsUrl,
      CrashPoint point,
      String prefix,
      int projects,
      int eventsPerProject,
      int haltAtAck)
      throws Exception {
    Settings settings = Settings.defaults();
    Connection nats = JetStreamConnections.connect(natsUrl, "crashing-writer");
    new JetStreamTopology(nats.jetStreamManagement(), settings).ensure();
    Database db = Database.open(dbUrl);
    CountDownLatch committed = new CountDownLatch(1);
    GatedTransport transport =
        new GatedTransport(JetStreamEventLog.bind(nats), point, committed, haltAtAck);
    Coordinator coordinator =
        Coordinator.wiring()
            .database(db)
            .transport(transport)
            .clock(Clock.systemUTC())
            .settings(settings)
            .wire();
    Clock clock = Clock.systemUTC();
    long started = System.nanoTime();
    List<CompletableFuture<?>> commits = new ArrayList<>();
    for (String p : NumberedEvents.projects(prefix, projects)) {
      commits.add(coordinator.root(p).createProject("tenant-1", p));
      for (int n = 0; n < eventsPerProject; n++) {
        Event e = NumberedEvents.event(p, n, clock.instant());
        commits.add(
            coordinator
                .changeEvents()
                .appendChangeEvents(p, NumberedEvents.changeOf(p), List.of(e)));
      }
    }
    commits.forEach(CompletableFuture::join);
    System.out.println(
        "COMMITTED "
            + commits.size()
            + " in "
            + (System.nanoTime() - started) / 1_000_000
            + " ms; publish calls so far "
            + transport.calls);
    System.out.flush();
    if (point == CrashPoint.AFTER_COMMIT) {
      // The publisher's runs are parked in publish(): killed after commit, before any send.
      die("after commit, before publish");
    }
    committed.countDown(); // let the publisher go; the PubAck callback kills the process
    // The PubAck callback kills the process; if it never does, main() reports NOT KILLED.
    new CountDownLatch(1).await(60, java.util.concurrent.TimeUnit.SECONDS);
  }

  static void die(String where) {
    System.out.println("KILLED " + where);
    System.out.flush();
    Runtime.getRuntime().halt(KILLED);
  }

  /**
   * Delegates to the real event log, with the crash hooks: {@code publish} waits until every state
   * change has committed (AFTER_COMMIT: forever), and the {@code haltAtAck}-th PubAck kills the
   * process inside the future's callback, before the publisher sees it.
   */
  static final class GatedTransport implements EventLogTransport {
    private final EventLogTransport real;
    private final CrashPoint point;
    private final CountDownLatch gate;
    private final int haltAtAck;
    private final AtomicInteger acks = new AtomicInteger();
    final AtomicInteger calls = new AtomicInteger();

    GatedTransport(EventLogTransport real, CrashPoint point, CountDownLatch gate, int haltAtAck) {
      this.real = real;
      this.point = point;
      this.gate = gate;
      this.haltAtAck = haltAtAck;
    }

    @Override
    public Set<Integer> boundStreams() {
      return real.boundStreams();
    }

    @Override
    public boolean isConnected() {
      return real.isConnected();
    }

    @Override
    public CompletableFuture<Long> publish(
        int streamIndex, String msgId, byte[] body, String expectedLastMsgId) {
      calls.incrementAndGet();
      try {
        gate.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return CompletableFuture.failedFuture(e);
      }
      if (point == CrashPoint.AFTER_COMMIT) {
        die("publish called after the gate"); // unreachable: the gate never opens
      }
      return real.publish(streamIndex, msgId, body, expectedLastMsgId)
          .thenApply(
              seq -> {
                if (acks.incrementAndGet() == haltAtAck) {
                  die("on PubAck " + haltAtAck + " (" + msgId + " at sequence " + seq + ")");
                }
                return seq;
              });
    }

    @Override
    public long lastSequence(int streamIndex) {
      return real.lastSequence(streamIndex);
    }

    @Override
    public Optional<String> messageIdAt(int streamIndex, long seq) {
      return real.messageIdAt(streamIndex, seq);
    }

    @Override
    public long fillReadPastSequences(int streamIndex, long recordedUpTo) {
      return real.fillReadPastSequences(streamIndex, recordedUpTo);
    }
  }
}
