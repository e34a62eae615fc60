package org.rhumbatron.coordinator;

import io.nats.client.Connection;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.cluster.OwnsEverything;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.EventLogTransport;
import org.rhumbatron.platform.eventlog.JetStreamEventLog;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;
import org.rhumbatron.testkit.SettableClock;

/** A coordinator on a real database and a real nats-server, with a settable clock. */
public final class CoordinatorFixture implements AutoCloseable {
  public final SettableClock clock;
  public final Settings settings;
  public final Database db;
  public final Connection nats;
  public final JetStreamEventLog transport;
  public final List<Integer> nudges = new CopyOnWriteArrayList<>();
  public final Coordinator coordinator;
  public final DutyOwnership ownership;

  /** Whether a reconnect starts the lost-tail check (off: as if its listener had not run yet). */
  public volatile boolean recoverOnReconnect = true;

  private CoordinatorFixture(
      String dbUrl, String natsUrl, SettableClock clock, Settings settings, Set<Integer> bound)
      throws Exception {
    this(
        dbUrl,
        natsUrl,
        clock,
        settings,
        bound,
        db -> OwnsEverything.single(),
        UnaryOperator.identity());
  }

  private CoordinatorFixture(
      String dbUrl,
      String natsUrl,
      SettableClock clock,
      Settings settings,
      Set<Integer> bound,
      Function<Database, DutyOwnership> ownership,
      UnaryOperator<EventLogTransport> seenAs)
      throws Exception {
    this.clock = clock;
    this.settings = settings;
    this.db = Database.open(dbUrl);
    this.ownership = ownership.apply(db);
    Coordinator[] self = new Coordinator[1];
    this.nats =
        JetStreamConnections.connect(
            natsUrl,
            "test",
            () -> {
              if (self[0] != null && recoverOnReconnect) {
                self[0].recoverLater();
              }
            });
    new JetStreamTopology(nats.jetStreamManagement(), settings).ensure();
    this.transport =
        bound == null ? JetStreamEventLog.bind(nats) : JetStreamEventLog.bindOnly(nats, bound);
    this.coordinator =
        Coordinator.wiring()
            .database(db)
            .transport(seenAs.apply(transport))
            .clock(clock)
            .settings(settings)
            .nudges(nudges::add)
            .ownership(this.ownership)
            .wire();
    self[0] = coordinator;
  }

  public static CoordinatorFixture start(
      String dbUrl, String natsUrl, SettableClock clock, Settings settings) throws Exception {
    return new CoordinatorFixture(dbUrl, natsUrl, clock, settings, null);
  }

  /** One node of several on one database: its duties held through {@code ownership}. */
  public static CoordinatorFixture startNode(
      String dbUrl,
      String natsUrl,
      SettableClock clock,
      Settings settings,
      Function<Database, DutyOwnership> ownership)
      throws Exception {
    return startNode(dbUrl, natsUrl, clock, settings, ownership, UnaryOperator.identity());
  }

  /** {@link #startNode}, its coordinator seeing the event log through {@code seenAs}. */
  public static CoordinatorFixture startNode(
      String dbUrl,
      String natsUrl,
      SettableClock clock,
      Settings settings,
      Function<Database, DutyOwnership> ownership,
      UnaryOperator<EventLogTransport> seenAs)
      throws Exception {
    return new CoordinatorFixture(dbUrl, natsUrl, clock, settings, null, ownership, seenAs);
  }

  public static CoordinatorFixture startBound(
      String dbUrl, String natsUrl, SettableClock clock, Settings settings, Set<Integer> bound)
      throws Exception {
    return new CoordinatorFixture(dbUrl, natsUrl, clock, settings, bound);
  }

  /** A Change Event with its stable id. */
  public Event changeEvent(String projectId, String changeId, String taskId, int n) {
    return Event.builder()
        .eventId(StableIds.stableEventId(changeId, EventType.TASK_COMPLETED, taskId, "n" + n))
        .eventType(EventType.TASK_COMPLETED)
        .tenantId("tenant-1")
        .projectId(projectId)
        .changeId(changeId)
        .taskId(taskId)
        .actor("test")
        .correlationId(changeId)
        .timestamp(clock.instant())
        .build();
  }

  public static SettableClock clockAt(String iso) {
    return new SettableClock(Instant.parse(iso));
  }

  @Override
  public void close() throws Exception {
    ownership.close();
    coordinator.close();
    nats.close();
    db.close();
  }
}
