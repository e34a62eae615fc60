package org.rhumbatron.coordinator.shard;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.rhumbatron.coordinator.actor.ActorRuntime;
import org.rhumbatron.coordinator.actor.ActorType;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.Fnv1a;

/**
 * The seed's {@code appendChangeEvents}: sends a Change's Events to the shard that owns {@code
 * change:<id>} ({@code fnv1a32(key) mod shardCount}).
 */
public final class ChangeEvents {
  private final ActorRuntime runtime;
  private final ActorType<ResourceShardActor> shards;
  private final int shardCount;

  public ChangeEvents(ActorRuntime runtime, ActorType<ResourceShardActor> shards, int shardCount) {
    this.runtime = runtime;
    this.shards = shards;
    this.shardCount = shardCount;
  }

  /** The shard of a resource key such as {@code change:<id>} or {@code path:src/api/}. */
  public static int shardOf(String resourceKey, int shardCount) {
    return Fnv1a.bucket(resourceKey, shardCount);
  }

  public ResourceShardActor shardFor(String projectId, String resourceKey) {
    return runtime.actor(
        shards, ResourceShardActor.actorId(projectId, shardOf(resourceKey, shardCount)));
  }

  /** Appends Change Events (stable ids) to the owner of {@code change:<changeId>}. */
  public CompletableFuture<Integer> appendChangeEvents(
      String projectId, String changeId, List<Event> events) {
    for (Event e : events) {
      if (!changeId.equals(e.changeId()) || !projectId.equals(e.projectId())) {
        throw new IllegalArgumentException(
            "event "
                + e.eventId()
                + " belongs to change "
                + e.changeId()
                + " of project "
                + e.projectId()
                + ", not to change "
                + changeId
                + " of project "
                + projectId);
      }
    }
    return shardFor(projectId, "change:" + changeId).appendEvents(events);
  }
}
