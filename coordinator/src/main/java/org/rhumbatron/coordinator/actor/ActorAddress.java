package org.rhumbatron.coordinator.actor;

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

  @Override
  public String toString() {
    return actorClass + "/" + actorId;
  }
}
