package org.rhumbatron.coordinator.shard;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.rhumbatron.coordinator.actor.ActorContext;
import org.rhumbatron.coordinator.actor.ActorType;
import org.rhumbatron.coordinator.outbox.Outbox;
import org.rhumbatron.coordinator.outbox.OutboxActor;
import org.rhumbatron.coordinator.outbox.OutboxPublisher;
import org.rhumbatron.protocol.Event;

/**
 * One per Project and shard ({@code <projectId>:<shard>}): owns the resource keys that hash to it
 * ({@code change:<id>}, claims, intents) and writes every Event that the root does not.
 */
public final class ResourceShardActor extends OutboxActor {
  public static final String ACTOR_CLASS = "resource-shard";

  public ResourceShardActor(ActorContext context, Outbox outbox, OutboxPublisher publisher) {
    super(context, outbox, publisher);
  }

  @Override
  public String projectId() {
    String id = address().actorId();
    return id.substring(0, id.lastIndexOf(':'));
  }

  public static ActorType<ResourceShardActor> type(Outbox outbox, OutboxPublisher publisher) {
    return new ActorType<>(ACTOR_CLASS, c -> new ResourceShardActor(c, outbox, publisher));
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
}
