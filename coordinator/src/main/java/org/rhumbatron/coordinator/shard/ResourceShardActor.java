package org.rhumbatron.coordinator.shard;

import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.rhumbatron.coordinator.actor.ActorContext;
import org.rhumbatron.coordinator.actor.ActorType;
import org.rhumbatron.coordinator.outbox.Outbox;
import org.rhumbatron.coordinator.outbox.OutboxActor;
import org.rhumbatron.coordinator.outbox.OutboxPublisher;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.Event;

/**
 * One per Project and shard ({@code <projectId>:<shard>}): owns the resource keys that hash to it
 * ({@code change:<id>}, claims, intents) and writes every Event that the root does not.
 */
public final class ResourceShardActor extends OutboxActor {
  public static final String ACTOR_CLASS = "resource-shard";

  private final ShardAlarmWork alarmWork;

  public ResourceShardActor(
      ActorContext context, Outbox outbox, OutboxPublisher publisher, ShardAlarmWork alarmWork) {
    super(context, outbox, publisher);
    this.alarmWork = alarmWork;
  }

  @Override
  public String projectId() {
    String id = address().actorId();
    return id.substring(0, id.lastIndexOf(':'));
  }

  public static ActorType<ResourceShardActor> type(
      Outbox outbox, OutboxPublisher publisher, ShardAlarmWork alarmWork) {
    return new ActorType<>(
        ACTOR_CLASS, c -> new ResourceShardActor(c, outbox, publisher, alarmWork));
  }

  /** The shard number of this actor ({@code fnv1a32(key) mod shardCount} of its keys). */
  public int shard() {
    String id = address().actorId();
    return Integer.parseInt(id.substring(id.lastIndexOf(':') + 1));
  }

  /** The id of the shard actor of {@code projectId} that owns {@code shard}. */
  public static String actorId(String projectId, int shard) {
    return projectId + ":" + shard;
  }

  /**
   * Appends {@code events} in one transaction; ids already in the outbox are ignored. Returns how
   * many were new. Change Events carry stable ids ({@code StableIds.stableEventId}), so a retried
   * step adds nothing.
   */
  public CompletableFuture<Integer> appendEvents(List<Event> events) {
    List<Outbox.Encoded> encoded = events.stream().map(this::encode).toList();
    return transactWithEvents(
        (tx, out) -> {
          int fresh = 0;
          for (Outbox.Encoded e : encoded) {
            if (out.append(e)) {
              fresh++;
            }
          }
          return fresh;
        });
  }

  /**
   * A state change of this shard and its Events, in one transaction (the lifecycle code's door).
   */
  public <T> CompletableFuture<T> change(EventWork<T> work) {
    return transactWithEvents(work);
  }

  /**
   * Sets this shard's alarm to {@code at} unless it is due earlier already, in the running
   * transaction (e.g. when a claim that expires at {@code at} is acquired).
   */
  public void armAlarm(Tx tx, Instant at) throws SQLException {
    context().alarms().setIfEarlier(tx, address(), at);
  }

  /** Publishes what is due, then runs the lifecycle's due work (claim expiry). */
  @Override
  protected void onAlarm() {
    super.onAlarm();
    transactWithEventsOnLane(
        (tx, out) -> {
          alarmWork.runDue(tx, out, this);
          return null;
        });
  }

  @Override
  protected Optional<Instant> nextDueWork(Tx tx) throws SQLException {
    Optional<Instant> publish = super.nextDueWork(tx);
    Optional<Instant> work = alarmWork.nextDue(tx, this);
    if (publish.isEmpty()) {
      return work;
    }
    return work.isPresent() && work.get().isBefore(publish.get()) ? work : publish;
  }
}
