package org.rhumbatron.coordinator.actor;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import org.rhumbatron.platform.cluster.Duty;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.cluster.FencedException;
import org.rhumbatron.platform.cluster.OwnsEverything;
import org.rhumbatron.platform.concurrent.DaemonThreads;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads actors on demand, gives each a serial lane on a shared pool, fires their persisted alarms
 * through {@link AlarmGuard}, and unloads actors that sat idle.
 */
public final class ActorRuntime implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ActorRuntime.class);
  private static final int ALARM_SCAN_LIMIT = 500;

  private final Database database;
  private final Clock clock;
  private final Settings settings;
  private final ExecutorService pool;
  private final ActorAlarms alarms;
  private final AlarmGuard guard;
  private final Map<String, ActorType<?>> types = new ConcurrentHashMap<>();
  private final Map<ActorAddress, Loaded> loaded = new ConcurrentHashMap<>();
  private final LongAdder alarmFires = new LongAdder();
  private final LongAdder alarmsDeleted = new LongAdder();
  private ScheduledExecutorService ticker;
  private volatile DutyOwnership ownership = OwnsEverything.single();
  private volatile Function<ActorAddress, Duty> dutyOf = a -> Duty.SWEEP;

  private record Loaded(Actor actor, SerialExecutor lane, long[] lastUsedMs) {}

  public ActorRuntime(Database database, Clock clock, Settings settings, int threads) {
    this.database = database;
    this.clock = clock;
    this.settings = settings;
    this.pool = Executors.newFixedThreadPool(threads, DaemonThreads.named("actor"));
    this.alarms = new ActorAlarms(clock);
    this.guard = new AlarmGuard(clock, settings.get(Settings.ALARM_FIRES_PER_DAY));
  }

  public void register(ActorType<?> type) {
    if (types.putIfAbsent(type.actorClass(), type) != null) {
      throw new IllegalStateException("actor class " + type.actorClass() + " is registered twice");
    }
  }

  /** The actor at {@code id} of {@code type}, loaded now when it is not in memory. */
  @SuppressWarnings("unchecked")
  public <A extends Actor> A actor(ActorType<A> type, String id) {
    if (types.get(type.actorClass()) != type) {
      throw new IllegalStateException("actor class " + type.actorClass() + " is not registered");
    }
    return (A) load(new ActorAddress(type.actorClass(), id)).actor();
  }

  private Loaded load(ActorAddress address) {
    Loaded entry =
        loaded.computeIfAbsent(
            address,
            a -> {
              ActorType<?> type = types.get(a.actorClass());
              if (type == null) {
                throw new IllegalStateException("no actor class " + a.actorClass());
              }
              SerialExecutor lane = new SerialExecutor(pool);
              Actor actor =
                  type.factory()
                      .apply(
                          new ActorContext(
                              a,
                              database,
                              clock,
                              settings,
                              lane,
                              alarms,
                              () -> ownership.epoch(dutyOf.apply(a))));
              return new Loaded(actor, lane, new long[] {clock.millis()});
            });
    entry.lastUsedMs()[0] = clock.millis();
    return entry;
  }

  /**
   * Several cores: an alarm fires only on the node that holds its actor's duty ({@code dutyOf}),
   * and the transactions that consume and re-arm it pass that duty's fence, so it fires once.
   */
  public void fenceAlarms(DutyOwnership ownership, Function<ActorAddress, Duty> dutyOf) {
    this.ownership = ownership;
    this.dutyOf = dutyOf;
  }

  public ActorAlarms alarms() {
    return alarms;
  }

  public AlarmGuard guard() {
    return guard;
  }

  /**
   * Fires every alarm that is due now, each on its actor's lane, and waits for them. Returns how
   * many fired (capped ones do not count). Production calls it from a ticker; tests call it after
   * moving a settable clock.
   */
  public int fireDueAlarms() {
    Instant now = clock.instant();
    List<ActorAddress> due = database.read(tx -> alarms.due(tx, now, ALARM_SCAN_LIMIT));
    List<CompletableFuture<Boolean>> fires =
        due.stream()
            .filter(a -> types.containsKey(a.actorClass()) && ownership.owns(dutyOf.apply(a)))
            .map(this::fire)
            .toList();
    int fired = 0;
    for (CompletableFuture<Boolean> f : fires) {
      if (f.join()) {
        fired++;
      }
    }
    return fired;
  }

  private CompletableFuture<Boolean> fire(ActorAddress address) {
    Actor actor = load(address).actor();
    Duty duty = dutyOf.apply(address);
    return actor.onLane(
        () -> {
          AlarmGuard.Decision decision;
          try {
            decision =
                database.inTransaction(
                    tx -> {
                      actor.serialize(tx);
                      ownership.fence(tx, duty);
                      return guard.admit(tx, address);
                    });
          } catch (FencedException lost) {
            return false; // another node holds the duty now; it fires the alarm
          }
          if (decision != AlarmGuard.Decision.FIRE) {
            return false;
          }
          alarmFires.increment();
          try {
            actor.onAlarm();
          } catch (RuntimeException e) {
            log.warn("alarm of {} failed: {}", address, e.toString());
          }
          // Not fenced: re-arming only sets an alarm earlier, and whoever holds the duty then
          // decides whether it fires.
          database.inTransaction(
              tx -> {
                actor.serialize(tx);
                Optional<Instant> next = actor.nextDueWork(tx);
                if (next.isPresent()) {
                  alarms.setIfEarlier(tx, address, next.get());
                } else if (alarms.dueAt(tx, address).isEmpty()) {
                  alarmsDeleted.increment();
                }
                return null;
              });
          return true;
        });
  }

  /** Unloads actors idle (nothing queued or running) for at least {@code idleFor}. */
  public int unloadIdle(Duration idleFor) {
    long cutoff = clock.millis() - idleFor.toMillis();
    int before = loaded.size();
    loaded
        .entrySet()
        .removeIf(e -> e.getValue().lane().isIdle() && e.getValue().lastUsedMs()[0] <= cutoff);
    return before - loaded.size();
  }

  public boolean isLoaded(ActorAddress address) {
    return loaded.containsKey(address);
  }

  public long alarmFires() {
    return alarmFires.sum();
  }

  public long alarmsDeleted() {
    return alarmsDeleted.sum();
  }

  /** Starts the ticker that fires due alarms and unloads idle actors (production). */
  public void startTicker(Duration every, Duration idleFor) {
    ticker = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("actor-alarms"));
    ticker.scheduleWithFixedDelay(
        () -> {
          try {
            fireDueAlarms();
            unloadIdle(idleFor);
          } catch (RuntimeException e) {
            log.warn("alarm tick failed: {}", e.toString());
          }
        },
        0,
        every.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    if (ticker != null) {
      ticker.shutdownNow();
    }
    pool.shutdown();
    try {
      if (!pool.awaitTermination(10, TimeUnit.SECONDS)) {
        pool.shutdownNow();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      pool.shutdownNow();
    }
  }
}
