package org.rhumbatron.coordinator.actor;

import java.util.function.Function;

/**
 * A class of actors: its name in the database ({@code actor_class}) and how to make one from its
 * context. The runtime loads an actor of a type on demand and unloads it when idle.
 */
public record ActorType<A extends Actor>(String actorClass, Function<ActorContext, A> factory) {}
