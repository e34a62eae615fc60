package org.rhumbatron.coordinator.actor;

import java.time.Clock;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;

/** What an actor gets from the runtime: its address, database, clock, settings and lane. */
public record ActorContext(
    ActorAddress address,
    Database database,
    Clock clock,
    Settings settings,
    SerialExecutor lane,
    ActorAlarms alarms) {}
