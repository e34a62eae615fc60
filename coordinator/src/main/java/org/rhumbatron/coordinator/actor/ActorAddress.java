package org.rhumbatron.coordinator.actor;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/** Where an actor lives: its class (e.g. {@code project-root}) and its id within the class. */
public record ActorAddress(String actorClass, String actorId) {
  public ActorAddress {
    Objects.requireNonNull(actorClass, "actorClass");
    Objects.requireNonNull(actorId, "actorId");
    if (actorClass.isBlank() || actorId.isBlank()) {
      throw new IllegalArgumentException("actor class and id must not be blank");
    }
  }

  /**
   * The name of this actor's lock in a database that several cores share: FNV-1a, 64 bits, over the
   * UTF-8 of {@code actor:<class>/<id>}. Stable across processes and releases, and 64 bits wide so
   * two actors practically never share a lock (they would only wait for each other).
   */
  public long lockKey() {
    long hash = 0xcbf29ce484222325L;
    for (byte b : ("actor:" + this).getBytes(StandardCharsets.UTF_8)) {
      hash ^= b & 0xff;
      hash *= 0x100000001b3L;
    }
    return hash;
  }

  @Override
  public String toString() {
    return actorClass + "/" + actorId;
  }
}
