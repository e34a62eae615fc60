package org.rhumbatron.router;

import io.nats.client.Connection;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.rhumbatron.coordinator.actor.ActorRuntime;
import org.rhumbatron.coordinator.actor.ActorType;
import org.rhumbatron.coordinator.view.ProjectViewActor;
import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.bucket.DirectoryBucket;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.cluster.OwnsEverything;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.DatabaseOptions;
import org.rhumbatron.platform.eventlog.EventLogClient;
import org.rhumbatron.platform.eventlog.JetStreamEventLog;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.platform.metrics.MetricsBinding;
import org.rhumbatron.platform.metrics.PlatformMetrics;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.platform.queue.JetStreamCommandTransport;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.router.analytics.AnalyticsProjector;
import org.rhumbatron.router.archive.ArchiveExpiry;
import org.rhumbatron.router.archive.AuditArchiver;
import org.rhumbatron.router.causal.CausalBatchRouter;
import org.rhumbatron.router.claims.EventClaims;
import org.rhumbatron.router.deadletter.DeadLetterOperator;
import org.rhumbatron.router.projector.ProjectViewProjector;
import org.rhumbatron.testkit.SettableClock;

/**
 * The event router on a real nats-server and database, as core wires it (the archive in a directory
 * bucket), with a recording command sink.
 */
final class RouterFixture implements AutoCloseable {
  static final Instant START = Instant.parse("2026-12-02T10:00:30Z");

  final SettableClock clock = new SettableClock(START);
  final Settings settings;
  final Connection connection;
  final Database database;
  final ActorRuntime runtime;
  final ActorType<ProjectViewActor> views = ProjectViewActor.type();
  final EventLogClient eventLog;
  final JetStreamEventLog publisher;
  final EnvelopeCodec codec = new EnvelopeCodec();
  final ProjectViewProjector.Factory projector;
  final List<Command> sentCommands = new CopyOnWriteArrayList<>();
  final Bucket bucket;
  final EventRouter router;
  final DutyOwnership ownership;
  volatile CausalBatchRouter causalRules = CausalBatchRouter.NO_RULES;

  RouterFixture(String natsUrl, String databaseUrl, Path dataDir, Map<String, String> overrides)
      throws Exception {
    this(natsUrl, databaseUrl, dataDir, overrides, archiver -> archiver);
  }

  /** With the archiver as {@code archiver} wraps it (a test that watches its batches). */
  RouterFixture(
      String natsUrl,
      String databaseUrl,
      Path dataDir,
      Map<String, String> overrides,
      java.util.function.UnaryOperator<org.rhumbatron.router.run.SubscriptionHandler> archiver)
      throws Exception {
    this(natsUrl, databaseUrl, dataDir, overrides, archiver, db -> OwnsEverything.single());
  }

  /** One node of several on one database: its stream duties held through {@code ownership}. */
  RouterFixture(
      String natsUrl,
      String databaseUrl,
      Path dataDir,
      Map<String, String> overrides,
      java.util.function.UnaryOperator<org.rhumbatron.router.run.SubscriptionHandler> archiver,
      java.util.function.Function<Database, DutyOwnership> ownershipOf)
      throws Exception {
    settings = Settings.defaults().with(overrides);
    connection = JetStreamConnections.connect(natsUrl, "router-test");
    new JetStreamTopology(connection.jetStreamManagement(), settings).ensure();
    publisher = JetStreamEventLog.bind(connection);
    database = Database.open(databaseUrl, DatabaseOptions.builder().clock(clock).build());
    ownership = ownershipOf.apply(database);
    runtime = new ActorRuntime(database, clock, settings, 4);
    runtime.register(views);
    eventLog = new EventLogClient(connection, codec, settings);
    bucket = DirectoryBucket.open(dataDir, Bucket.EVIDENCE, clock);
    router =
        EventRouter.wiring()
            .eventLog(eventLog)
            .database(database)
            .views(p -> runtime.actor(views, p))
            .rules(
                new CausalBatchRouter() { // the rules a test sets later, with their prepare step
                  @Override
                  public CausalBatchRouter prepare(
                      java.util.List<org.rhumbatron.protocol.Event> u) {
                    return causalRules.prepare(u);
                  }

                  @Override
                  public boolean prepares(org.rhumbatron.protocol.Event e) {
                    return causalRules.prepares(e);
                  }

                  @Override
                  public void routeCausalBatch(
                      org.rhumbatron.platform.db.Tx tx,
                      java.util.List<org.rhumbatron.protocol.Event> fresh)
                      throws java.sql.SQLException {
                    causalRules.routeCausalBatch(tx, fresh);
                  }
                })
            .auditArchiver(
                archiver.apply(
                    new AuditArchiver(bucket, codec, database, new EventClaims(clock, ownership))))
            .analyticsProjector(
                new AnalyticsProjector(
                    database,
                    new EventClaims(clock, ownership),
                    new PlatformMetrics(database, clock, MetricsBinding.EVENT_METRICS),
                    settings))
            .commands(sentCommands::add)
            .deadLetters(
                new DeadLetterOperator(
                    database,
                    new Commands(new JetStreamCommandTransport(connection), codec),
                    codec,
                    clock))
            .archiveExpiry(new ArchiveExpiry(bucket, clock, settings))
            .clock(clock)
            .settings(settings)
            .ownership(ownership)
            .wire();
    projector = router.projector();
  }

  /** Publishes {@code events} to their projects' streams, as the outbox publisher would. */
  void publish(List<Event> events) throws Exception {
    for (Event e : events) {
      publisher
          .publish(EventStreams.streamIndex(e.projectId()), e.eventId(), codec.encodeEvent(e), null)
          .get();
    }
  }

  /** Publishes raw bytes (a malformed envelope) to a stream. */
  void publishRaw(int stream, String messageId, byte[] body) throws Exception {
    publisher.publish(stream, messageId, body, null).get();
  }

  long count(String sql, Object... args) {
    return database.read(tx -> tx.queryLong(sql, args));
  }

  @Override
  public void close() throws Exception {
    ownership.close();
    router.close();
    runtime.close();
    database.close();
    connection.close();
  }
}
