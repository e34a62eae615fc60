package org.rhumbatron.checker;

import io.nats.client.Connection;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.protocol.EventStreams;

/**
 * Injects the faults of a check's plan into its running cluster, one at a time, each healed after
 * its time; keeps the poison it sent and the markers of those a lost tail cut.
 */
final class FaultInjector {
  /** How long a core-kill-after-commit waits for a create before it kills core anyway. */
  static final Duration AFTER_COMMIT_WITHIN = Duration.ofSeconds(30);

  private final CheckCluster cluster;
  private final CheckWorkload workload;
  private final CheckDatabase database;
  private final Takeovers takeovers;
  private final Clock clock;
  private final Poison poisoner;
  private final List<Integer> poisonStreams;
  private final List<Poison.Sent> poison = new ArrayList<>();
  private final Set<String> poisonCut = new HashSet<>();

  FaultInjector(
      CheckCluster cluster,
      CheckWorkload workload,
      CheckDatabase database,
      Takeovers takeovers,
      Clock clock,
      Poison poisoner,
      List<Integer> poisonStreams) {
    this.cluster = cluster;
    this.workload = workload;
    this.database = database;
    this.takeovers = takeovers;
    this.clock = clock;
    this.poisoner = poisoner;
    this.poisonStreams = poisonStreams;
  }

  /** The poison messages sent so far. */
  List<Poison.Sent> poison() {
    return poison;
  }

  /** The markers of poison that a lost-tail fault cut from the server's store. */
  Set<String> poisonCut() {
    return poisonCut;
  }

  /** Injects {@code f} and heals it after its time; a poison fault sends {@code poisonShare}. */
  void inject(FaultPlan.Fault f, int poisonShare) throws Exception {
    CheckCores cores = cluster.cores();
    CheckNats nats = cluster.nats();
    switch (f.kind()) {
      case CORE_KILL -> {
        cores.killAll();
        Thread.sleep(f.lastsMillis());
        cores.startAll();
      }
      case CORE_KILL_AFTER_COMMIT -> killAfterCommit(f);
      case NATS_KILL -> {
        nats.killAll();
        Thread.sleep(f.lastsMillis());
        nats.startAll();
      }
      case NATS_PAUSE -> {
        nats.signalAll("STOP");
        Thread.sleep(f.lastsMillis());
        nats.signalAll("CONT");
      }
      case NATS_NODE_KILL -> {
        nats.kill(f.target());
        Thread.sleep(f.lastsMillis());
        nats.start(f.target());
      }
      case NODE_KILL -> nodeDown(f, false);
      case NODE_PAUSE -> nodeDown(f, true);
      case NODE_STALL -> stalls(f);
      case LOST_TAIL -> loseTail(f);
      case LINK_CUT -> link(f, TcpProxy::cut);
      case LINK_STALL -> link(f, TcpProxy::stall);
      case LINK_SLOW -> link(f, p -> p.slow(50_000));
      case POISON -> {
        try (Connection c = JetStreamConnections.connect(nats.url(), "check-poison")) {
          poison.addAll(poisoner.send(c.jetStream(), poisonShare, poison.size(), poisonStreams));
        }
      }
      case DB_RESTART, DISK_FULL -> database.outage(f.lastsMillis());
      case NATS_DOWN_AT_START -> {
        // handled before the workload starts
      }
    }
  }

  private void killAfterCommit(FaultPlan.Fault f) throws Exception {
    CheckCores cores = cluster.cores();
    CountDownLatch killed = new CountDownLatch(1);
    workload.afterNextCreate(
        () -> {
          try {
            cores.killAll();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          killed.countDown();
        });
    if (!killed.await(AFTER_COMMIT_WITHIN.toMillis(), TimeUnit.MILLISECONDS)) {
      workload.afterNextCreate(null);
      cores.killAll();
    }
    Thread.sleep(f.lastsMillis());
    cores.startAll();
  }

  /** One node killed or paused; the other cores' takeover of its duties timed. */
  private void nodeDown(FaultPlan.Fault f, boolean paused) throws Exception {
    CheckCores cores = cluster.cores();
    takeovers.answers(cores.apiUrl(f.target()));
    String nodeId = cores.nodeId(f.target());
    try (Connection watch = JetStreamConnections.connect(cluster.nats().url(), "check-inflight")) {
      InFlightWork inFlight = paused ? null : takeovers.inFlight(cluster.dbUrl());
      // What every consumer has delivered and not settled just before the kill.
      InFlightWork.Snapshot inHand = inFlight == null ? null : inFlight.take(watch);
      long at = clock.millis();
      if (paused) {
        cores.pause(f.target());
      } else {
        cores.kill(f.target());
      }
      CompletableFuture<Void> handled =
          inHand == null
              ? CompletableFuture.completedFuture(null)
              : CompletableFuture.runAsync(
                  () -> {
                    try {
                      inFlight.await(inHand, at, Duration.ofMillis(f.lastsMillis()), watch, nodeId);
                    } catch (Exception e) {
                      throw new IllegalStateException("timing the in-flight work failed", e);
                    }
                  });
      takeovers.await(nodeId, paused, at, Duration.ofMillis(f.lastsMillis()), CheckRun.live(cores));
      Thread.sleep(Math.max(0, at + f.lastsMillis() - clock.millis()));
      handled.join();
    }
    if (paused) {
      cores.resume(f.target());
    } else {
      cores.start(f.target());
    }
  }

  /**
   * Short SIGSTOPs of one core, as a long GC pause or a starved CPU would stop it: none may cost it
   * a duty. Its duties and their epochs are read before and after the burst.
   */
  private void stalls(FaultPlan.Fault f) throws Exception {
    CheckCores cores = cluster.cores();
    takeovers.answers(cores.apiUrl(f.target()));
    String nodeId = cores.nodeId(f.target());
    // A core started by the fault before may still be taking its share: wait for a steady start.
    java.util.Map<String, Long> before = takeovers.dutiesOf(nodeId, CheckRun.live(cores));
    long settleUntil = clock.millis() + 30_000;
    while (clock.millis() < settleUntil) {
      Thread.sleep(3_000);
      java.util.Map<String, Long> again = takeovers.dutiesOf(nodeId, CheckRun.live(cores));
      if (again.equals(before)) {
        break;
      }
      before = again;
    }
    for (int i = 0; i < FaultPlan.STALLS_PER_FAULT; i++) {
      cores.pause(f.target());
      Thread.sleep(FaultPlan.STALL.toMillis());
      cores.resume(f.target());
      Thread.sleep(FaultPlan.STALL_GAP.toMillis());
    }
    java.util.Map<String, Long> after = takeovers.dutiesOf(nodeId, CheckRun.live(cores));
    takeovers.stalled(nodeId, FaultPlan.STALLS_PER_FAULT, before, after);
  }

  private void loseTail(FaultPlan.Fault f) throws Exception {
    List<Long> cut = cluster.nats().loseTail(f.stream(), 3);
    String subject = EventStreams.streamSubject(f.stream());
    for (Poison.Sent p : poison) {
      if (p.eventStream() && p.subject().equals(subject) && cut.contains(p.streamSequence())) {
        poisonCut.add(p.marker());
      }
    }
  }

  private void link(FaultPlan.Fault f, Consumer<TcpProxy> fault) throws Exception {
    cluster.nats().proxies(fault);
    Thread.sleep(f.lastsMillis());
    cluster.nats().proxies(TcpProxy::heal);
  }
}
