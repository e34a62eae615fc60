package org.rhumbatron.coordinator;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.rhumbatron.coordinator.actor.ActorAddress;
import org.rhumbatron.coordinator.actor.ActorRuntime;
import org.rhumbatron.coordinator.actor.ActorType;
import org.rhumbatron.coordinator.outbox.LostTailRepair;
import org.rhumbatron.coordinator.outbox.Outbox;
import org.rhumbatron.coordinator.outbox.OutboxJanitor;
import org.rhumbatron.coordinator.outbox.OutboxPublisher;
import org.rhumbatron.coordinator.outbox.StreamNudges;
import org.rhumbatron.coordinator.project.ProjectRootActor;
import org.rhumbatron.coordinator.shard.ChangeEvents;
import org.rhumbatron.coordinator.shard.ResourceShardActor;
import org.rhumbatron.coordinator.shard.ShardAlarmWork;
import org.rhumbatron.coordinator.view.ProjectViewActor;
import org.rhumbatron.platform.cluster.Duty;
import org.rhumbatron.platform.cluster.DutyListener;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.cluster.OwnsEverything;
import org.rhumbatron.platform.concurrent.DaemonThreads;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.EventLogTransport;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.EventStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The coordinator wired together: the actor runtime with ProjectRoot, ResourceShard and ProjectView
 * actors, their outboxes, the publisher and the lost-tail repair. Core and the tests build it the
 * same way.
 */
public final class Coordinator implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Coordinator.class);
  private static final int ACTOR_THREADS = 16;
  // One thread per stream lane: a lane holds its thread while it waits for its PubAcks, and a
  // lane that waits for a thread adds that wait to every commit-to-PubAck time of its stream.
  private static final int PUBLISH_THREADS = EventStreams.STREAM_COUNT;
  private static final Duration RECOVERY_RETRY = Duration.ofMillis(250);
  private static final Duration SETTLE_WAIT = Duration.ofSeconds(30);
  private static final Duration WAITING_POLL = Duration.ofMillis(250);

  private final Database database;
  private final Clock clock;
  private final ActorRuntime runtime;
  private final ExecutorService publishPool;
  private final ExecutorService recoveryPool;
  private final java.util.concurrent.ScheduledExecutorService purgeTicker =
      Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("outbox-janitor"));
  private final OutboxPublisher publisher;
  private final LostTailRepair repair;
  private final EventLogTransport transport;
  private final OutboxJanitor janitor;
  private final Duration purgeEvery;
  private final ActorType<ProjectRootActor> roots;
  private final ActorType<ResourceShardActor> shards;
  private final ActorType<ProjectViewActor> views = ProjectViewActor.type();
  private final ChangeEvents changeEvents;
  private final DutyOwnership ownership;

  /** The coordinator's parts; one node that holds every duty unless an ownership is set. */
  public static CoordinatorWiring wiring() {
    return new CoordinatorWiring();
  }

  Coordinator(CoordinatorWiring w) {
    Database database = w.database;
    EventLogTransport transport = w.transport;
    Clock clock = w.clock;
    Settings settings = w.settings;
    StreamNudges nudges = w.nudges;
    ShardAlarmWork shardAlarmWork = w.shardAlarmWork;
    DutyOwnership ownership = w.ownership;
    this.ownership = ownership;
    this.database = database;
    this.transport = transport;
    this.clock = clock;
    this.runtime = new ActorRuntime(database, clock, settings, ACTOR_THREADS);
    this.publishPool =
        Executors.newFixedThreadPool(PUBLISH_THREADS, DaemonThreads.named("outbox-publisher"));
    this.recoveryPool = Executors.newSingleThreadExecutor(DaemonThreads.named("outbox-recovery"));
    this.publisher =
        OutboxPublisher.wiring()
            .database(database)
            .alarms(runtime.alarms())
            .transport(transport)
            .nudges(nudges)
            .clock(clock)
            .settings(settings)
            .pool(publishPool)
            .ownership(ownership)
            .wire();
    this.repair =
        new LostTailRepair(
            database, transport, clock, settings.get(Settings.OUTBOX_KEEP_PUBLISHED), ownership);
    this.janitor =
        new OutboxJanitor(database, clock, settings.get(Settings.OUTBOX_KEEP_PUBLISHED), ownership);
    this.purgeEvery = settings.get(Settings.OUTBOX_PURGE_EVERY);
    Outbox outbox = new Outbox(new EnvelopeCodec(), clock);
    this.roots = ProjectRootActor.type(outbox, publisher);
    this.shards = ResourceShardActor.type(outbox, publisher, shardAlarmWork);
    runtime.register(roots);
    runtime.register(shards);
    runtime.register(views);
    this.changeEvents = new ChangeEvents(runtime, shards, settings.get(Settings.SHARD_COUNT));
    runtime.fenceAlarms(ownership, this::dutyOf);
    ownership.listen(
        new DutyListener() {
          @Override
          public void gained(Duty duty, long epoch) {
            if (duty.isStream()) {
              publisher.holdForTailCheck(duty.streamIndex());
              recoveryPool.execute(() -> checkTakenOver(duty.streamIndex(), 1));
            }
          }

          @Override
          public void lost(Duty duty) {
            if (duty.isStream()) {
              publisher.holdForTailCheck(duty.streamIndex());
            }
          }
        });
  }

  /** The duty an actor's alarms belong to: its project's stream. */
  private Duty dutyOf(ActorAddress address) {
    String id = address.actorId();
    String projectId =
        address.actorClass().equals(shards.actorClass())
            ? id.substring(0, id.lastIndexOf(':'))
            : id;
    return Duty.ofProject(projectId);
  }

  public DutyOwnership ownership() {
    return ownership;
  }

  public ProjectRootActor root(String projectId) {
    return runtime.actor(roots, projectId);
  }

  public ResourceShardActor shard(String projectId, int shard) {
    return runtime.actor(shards, ResourceShardActor.actorId(projectId, shard));
  }

  /** The read model of {@code projectId} (the seed's ProjectViewDO). */
  public ProjectViewActor view(String projectId) {
    return runtime.actor(views, projectId);
  }

  public ChangeEvents changeEvents() {
    return changeEvents;
  }

  public ActorRuntime runtime() {
    return runtime;
  }

  public OutboxPublisher publisher() {
    return publisher;
  }

  public Database database() {
    return database;
  }

  /**
   * At start and after a reconnect: puts a lost stream tail back to pending, then kicks every
   * stream with waiting rows. Returns how many streams were kicked.
   */
  public int recover() {
    long epoch = transport.connectionEpoch(); // before the check: a later drop needs another
    publisher.resync();
    List<Integer> repaired = new ArrayList<>();
    for (int stream : transport.boundStreams()) {
      if (!ownership.owns(Duty.stream(stream))) {
        continue; // its holder repairs it
      }
      if (!checkTail(stream).isEmpty()) { // throws while JetStream does not answer yet
        repaired.add(stream);
      }
    }
    publisher.resume(epoch);
    repaired.forEach(publisher::kick);
    return publisher.kickAllWaiting();
  }

  /**
   * The lost-tail repair of one stream, on its publisher lane once the rows it acknowledged are
   * recorded (a row acknowledged before the loss but not yet recorded would be missed). The fill
   * goes first, up to the highest sequence any consumer or row got, so that what the repair sends
   * again reaches every consumer under a sequence none has seen.
   */
  private List<ActorAddress> checkTail(int stream) {
    boolean bound = transport.boundStreams().contains(stream);
    return publisher.checkTail(
        stream,
        SETTLE_WAIT,
        () -> {
          if (!bound) {
            return List.<ActorAddress>of(); // its rows fail as unbound: nothing to repair
          }
          transport.fillReadPastSequences(stream, repair.highestRecordedSequence(stream));
          return repair.repair(stream);
        });
  }

  /**
   * After this node took a stream over (on the recovery thread): the node that held it may have
   * died with a tail the server lost, so the stream's repair runs before it publishes, as at start.
   * Tried again until it succeeds, or this node loses the stream again.
   */
  private void checkTakenOver(int stream, int attempt) {
    if (!ownership.owns(Duty.stream(stream))) {
      return; // the next takeover checks it
    }
    if (transport.isConnected()) {
      try {
        checkTail(stream);
        publisher.kick(stream);
        return;
      } catch (RuntimeException e) {
        if (attempt % 10 == 1) {
          log.warn(
              "checking the tail of {} after taking it over failed (attempt {}): {}",
              EventStreams.streamName(stream),
              attempt,
              e.toString());
        }
      }
    }
    try {
      purgeTicker.schedule(
          () -> recoveryPool.execute(() -> checkTakenOver(stream, attempt + 1)),
          RECOVERY_RETRY.toMillis(),
          TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException closing) {
      // core is stopping
    }
  }

  /**
   * After a reconnect (the NATS client calls this from its own thread): holds the publisher, then
   * on a background thread retries {@link #recover} until JetStream answers, and lets the publisher
   * go on. Sends in that window would be refused and counted against their rows.
   */
  public void recoverLater() {
    publisher.pause();
    recoveryPool.execute(
        () -> {
          for (int attempt = 1; ; attempt++) {
            try {
              int kicked = recover();
              log.info("event log reconnected: {} streams resume publishing", kicked);
              return;
            } catch (RuntimeException e) {
              if (attempt % 10 == 1) {
                log.warn(
                    "event log not ready after reconnect (attempt {}): {}", attempt, e.toString());
              }
              try {
                Thread.sleep(RECOVERY_RETRY.toMillis());
              } catch (InterruptedException stop) {
                Thread.currentThread().interrupt();
                return;
              }
            }
          }
        });
  }

  public OutboxJanitor janitor() {
    return janitor;
  }

  /**
   * Starts the alarm ticker and the purge of old published rows every {@code outbox.purge-every}
   * (production; tests call {@code runtime().fireDueAlarms()} and {@code
   * janitor().purgePublished()}).
   */
  public void startAlarms(Duration tick, Duration unloadIdleAfter) {
    runtime.startTicker(tick, unloadIdleAfter);
    purgeTicker.scheduleWithFixedDelay(
        () -> {
          try {
            long deleted = janitor.purgePublished();
            if (deleted > 0) {
              log.info("deleted {} published outbox rows past the lost-tail horizon", deleted);
            }
          } catch (RuntimeException e) {
            log.warn("outbox purge failed: {}", e.toString());
          }
        },
        purgeEvery.toMillis(),
        purgeEvery.toMillis(),
        TimeUnit.MILLISECONDS);
    if (!(ownership instanceof OwnsEverything)) {
      // Rows committed on another node kick that node's publisher, not this one: the holder of
      // a stream looks for its waiting rows itself.
      purgeTicker.scheduleWithFixedDelay(
          this::kickWaiting,
          WAITING_POLL.toMillis(),
          WAITING_POLL.toMillis(),
          TimeUnit.MILLISECONDS);
    }
  }

  private void kickWaiting() {
    try {
      publisher.kickAllWaiting();
    } catch (RuntimeException e) {
      log.debug("looking for waiting outbox rows failed: {}", e.toString());
    }
  }

  @Override
  public void close() {
    runtime.close();
    purgeTicker.shutdownNow();
    recoveryPool.shutdownNow();
    publishPool.shutdown();
    try {
      publishPool.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    publishPool.shutdownNow();
  }
}
