package org.rhumbatron.coordinator.actor;

import java.time.Clock;
import java.util.concurrent.Executor;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;

/** What an actor gets from the runtime: its address, database, clock, settings and lane. */
public record ActorContext(
    ActorAddress address,
    Database database,
    Clock clock,
    Settings settings,
    Executor lane,
    ActorAlarms alarms) {}
