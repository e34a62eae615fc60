package org.rhumbatron.coordinator.actor;

import java.time.Clock;
import java.util.Optional;
import java.util.function.Supplier;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;

/**
 * What an actor gets from the runtime: its address, database, clock, settings and lane, and {@code
 * alarmEpoch}: the epoch at which this node holds the duty that fires the actor's alarms, as far as
 * it knows, or empty when another node fires them.
 */
public record ActorContext(
    ActorAddress address,
    Database database,
    Clock clock,
    Settings settings,
    SerialExecutor lane,
    ActorAlarms alarms,
    Supplier<Optional<Long>> alarmEpoch) {}
