package org.rhumbatron.lifecycle;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.lifecycle.changes.Dispatched;
import org.rhumbatron.lifecycle.changes.Wake;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.DatabaseOptions;
import org.rhumbatron.platform.eventlog.JetStreamEventLog;
import org.rhumbatron.platform.jetstream.JetStreamConnections;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.platform.queue.JetStreamCommandTransport;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.testkit.SettableClock;

/**
 * A lifecycle on a real nats-server and database, as core wires it, with a settable clock and no
 * consumers: commands stay on the COMMANDS stream, where a test counts them. The tests of the
 * integration and agents modules use it too (this module's test jar).
 */
public final class LifecycleFixture implements AutoCloseable {
  public static final Instant START = Instant.parse("2026-12-04T10:00:00Z");

  public final SettableClock clock = new SettableClock(START);
  public final Settings settings;
  public final Connection connection;
  public final Database database;
  public final Coordinator coordinator;
  public final Commands commands;
  public final Lifecycle lifecycle;

  public LifecycleFixture(String natsUrl, String databaseUrl, Map<String, String> overrides)
      throws Exception {
    this(natsUrl, databaseUrl, overrides, DatabaseOptions.builder());
  }

  /** A lifecycle whose database opens with {@code options} (its clock is the fixture's). */
  public LifecycleFixture(
      String natsUrl,
      String databaseUrl,
      Map<String, String> overrides,
      DatabaseOptions.Builder options)
      throws Exception {
    settings = Settings.defaults().with(overrides);
    connection = JetStreamConnections.connect(natsUrl, "lifecycle-test");
    new JetStreamTopology(connection.jetStreamManagement(), settings).ensure();
    database = Database.open(databaseUrl, options.clock(clock).build());
    coordinator =
        Coordinator.wiring()
            .database(database)
            .transport(JetStreamEventLog.bind(connection))
            .clock(clock)
            .settings(settings)
            .shardAlarmWork(Lifecycle.shardAlarmWork(clock, settings))
            .wire();
    commands = new Commands(new JetStreamCommandTransport(connection), new EnvelopeCodec());
    lifecycle = new Lifecycle(coordinator, commands, clock, settings);
  }

  /** Creates an active Project as project.provision's handler does. */
  public void project(String projectId) throws Exception {
    lifecycle.projects().create(projectId, "tenant-1", "Project " + projectId).get();
  }

  /**
   * A Change of two Tasks ({@code b} after {@code a}, which has a scope) run by its Agents until
   * its work graph completed: verifying, its Candidate not composed yet.
   */
  public String verifying(String projectId, String request) throws Exception {
    String c =
        lifecycle
            .changes()
            .create(
                projectId,
                request,
                WorkGraph.of(
                    new WorkGraph.TaskSpec(
                        "a", null, List.of(), List.of("path:src/" + request + "/a")),
                    new WorkGraph.TaskSpec("b", null, List.of("a"), List.of())))
            .get()
            .change()
            .changeId();
    for (int round = 0; ; round++) {
      Dispatched d = lifecycle.changes().dispatch(c, "cmd_" + request + "_" + round).get();
      if (d.verification()) {
        return c;
      }
      for (Wake w : d.wakes()) {
        lifecycle.agents().start(w.task()).get();
        lifecycle.agents().proposeChangeset(w.task()).get();
        lifecycle.agents().complete(w.task()).get();
      }
    }
  }

  public long count(String sql, Object... args) {
    return database.read(tx -> tx.queryLong(sql, args));
  }

  /** The event types in the outbox, in commit order. */
  public List<String> outboxTypes() {
    return database.read(
        tx -> tx.query("SELECT event_type FROM outbox ORDER BY seq", rs -> rs.getString(1)));
  }

  /** Outbox rows of one event type. */
  public long outbox(String eventType) {
    return count("SELECT COUNT(*) FROM outbox WHERE event_type = ?", eventType);
  }

  /**
   * The database refuses (or again accepts) new rows of {@code table}, as a full disk refuses every
   * write: a trigger that fails each insert with the database's own words for it.
   */
  public void refuseInserts(String table, boolean refuse) {
    refuseInserts(database, table, refuse);
  }

  /** {@link #refuseInserts(String, boolean)} on any database. */
  public static void refuseInserts(Database database, String table, boolean refuse) {
    String name = "refuse_" + table;
    boolean sqlite = database.dialect() instanceof org.rhumbatron.platform.db.SqliteDialect;
    database.inTransaction(
        tx -> {
          if (sqlite) {
            tx.update(
                refuse
                    ? "CREATE TRIGGER "
                        + name
                        + " BEFORE INSERT ON "
                        + table
                        + " BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
                    : "DROP TRIGGER " + name);
          } else if (refuse) {
            tx.update(
                "CREATE FUNCTION "
                    + name
                    + "() RETURNS trigger AS $$ BEGIN"
                    + " RAISE EXCEPTION 'could not extend file: No space left on device'; END"
                    + " $$ LANGUAGE plpgsql");
            tx.update(
                "CREATE TRIGGER "
                    + name
                    + " BEFORE INSERT ON "
                    + table
                    + " FOR EACH ROW EXECUTE FUNCTION "
                    + name
                    + "()");
          } else {
            tx.update("DROP TRIGGER " + name + " ON " + table);
            tx.update("DROP FUNCTION " + name + "()");
          }
          return null;
        });
  }

  /** Messages on {@code cmd.<queue>} (nothing consumes them here). */
  public long commandsOn(Queue queue) throws IOException, JetStreamApiException {
    return connection
        .jetStreamManagement()
        .getStreamInfo(
            Queue.STREAM_NAME,
            io.nats.client.api.StreamInfoOptions.builder().filterSubjects(queue.subject()).build())
        .getStreamState()
        .getSubjectMap()
        .getOrDefault(queue.subject(), 0L);
  }

  /** The last command on {@code cmd.<queue>}. */
  public Command lastCommandOn(Queue queue) throws IOException, JetStreamApiException {
    return new EnvelopeCodec()
        .decodeCommand(
            connection
                .jetStreamManagement()
                .getLastMessage(Queue.STREAM_NAME, queue.subject())
                .getData());
  }

  @Override
  public void close() {
    coordinator.close();
    database.close();
    try {
      connection.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
