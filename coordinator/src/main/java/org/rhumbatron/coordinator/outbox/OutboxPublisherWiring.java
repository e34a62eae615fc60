package org.rhumbatron.coordinator.outbox;

import java.time.Clock;
import java.util.concurrent.Executor;
import org.rhumbatron.coordinator.actor.ActorAlarms;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.cluster.OwnsEverything;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.EventLogTransport;

/**
 * What {@link OutboxPublisher#wiring} builds the publisher from; every part is required but the
 * ownership. Without one the node holds every stream (one core); with several cores a stream is
 * published only by the holder of its duty, through its fence.
 */
public final class OutboxPublisherWiring {
  Database database;
  ActorAlarms alarms;
  EventLogTransport transport;
  StreamNudges nudges;
  Clock clock;
  Settings settings;
  Executor pool;
  DutyOwnership ownership = OwnsEverything.single();

  OutboxPublisherWiring() {}

  public OutboxPublisherWiring database(Database database) {
    this.database = database;
    return this;
  }

  /** Where a row that waits for a retry sets its actor's alarm. */
  public OutboxPublisherWiring alarms(ActorAlarms alarms) {
    this.alarms = alarms;
    return this;
  }

  public OutboxPublisherWiring transport(EventLogTransport transport) {
    this.transport = transport;
    return this;
  }

  /** Told after a run published something on a stream (the router). */
  public OutboxPublisherWiring nudges(StreamNudges nudges) {
    this.nudges = nudges;
    return this;
  }

  public OutboxPublisherWiring clock(Clock clock) {
    this.clock = clock;
    return this;
  }

  public OutboxPublisherWiring settings(Settings settings) {
    this.settings = settings;
    return this;
  }

  /** Where the streams' lanes run. */
  public OutboxPublisherWiring pool(Executor pool) {
    this.pool = pool;
    return this;
  }

  public OutboxPublisherWiring ownership(DutyOwnership ownership) {
    this.ownership = ownership;
    return this;
  }

  /** The publisher; names the first part missing. */
  public OutboxPublisher wire() {
    require(database, "database");
    require(alarms, "alarms");
    require(transport, "transport");
    require(nudges, "nudges");
    require(clock, "clock");
    require(settings, "settings");
    require(pool, "pool");
    require(ownership, "ownership");
    return new OutboxPublisher(this);
  }

  private static void require(Object part, String name) {
    if (part == null) {
      throw new IllegalStateException("OutboxPublisher.wiring(): " + name + " is not set");
    }
  }
}
