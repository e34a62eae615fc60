package org.rhumbatron.coordinator;

import java.time.Clock;
import org.rhumbatron.coordinator.outbox.StreamNudges;
import org.rhumbatron.coordinator.shard.ShardAlarmWork;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.cluster.OwnsEverything;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.EventLogTransport;

/**
 * What {@link Coordinator#wiring} builds the coordinator from. The database, the transport, the
 * clock and the settings are required; the rest has a default: no nudges, no shard alarm work
 * besides publishing, and one node that holds every duty.
 */
public final class CoordinatorWiring {
  Database database;
  EventLogTransport transport;
  Clock clock;
  Settings settings;
  StreamNudges nudges = StreamNudges.NONE;
  ShardAlarmWork shardAlarmWork = ShardAlarmWork.NONE;
  DutyOwnership ownership = OwnsEverything.single();

  CoordinatorWiring() {}

  public CoordinatorWiring database(Database database) {
    this.database = database;
    return this;
  }

  public CoordinatorWiring transport(EventLogTransport transport) {
    this.transport = transport;
    return this;
  }

  public CoordinatorWiring clock(Clock clock) {
    this.clock = clock;
    return this;
  }

  public CoordinatorWiring settings(Settings settings) {
    this.settings = settings;
    return this;
  }

  /** Who hears that a stream has rows committed (the router, to read them at once). */
  public CoordinatorWiring nudges(StreamNudges nudges) {
    this.nudges = nudges;
    return this;
  }

  /** What a shard's alarm does besides publishing (the lifecycle's claim expiry). */
  public CoordinatorWiring shardAlarmWork(ShardAlarmWork shardAlarmWork) {
    this.shardAlarmWork = shardAlarmWork;
    return this;
  }

  /**
   * Which stream duties this node holds (several cores). The publisher, the lost-tail repair, the
   * alarms and the outbox purge work under it and pass its fence.
   */
  public CoordinatorWiring ownership(DutyOwnership ownership) {
    this.ownership = ownership;
    return this;
  }

  /** The coordinator; names the first part missing. */
  public Coordinator wire() {
    require(database, "database");
    require(transport, "transport");
    require(clock, "clock");
    require(settings, "settings");
    require(nudges, "nudges");
    require(shardAlarmWork, "shardAlarmWork");
    require(ownership, "ownership");
    return new Coordinator(this);
  }

  private static void require(Object part, String name) {
    if (part == null) {
      throw new IllegalStateException("Coordinator.wiring(): " + name + " is not set");
    }
  }
}
