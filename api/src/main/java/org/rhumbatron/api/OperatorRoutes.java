package org.rhumbatron.api;

import io.javalin.Javalin;
import io.javalin.http.Context;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.api.StreamInfo;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.rhumbatron.coordinator.outbox.OutboxRowState;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.router.catchup.ConsumerLags;

/**
 * What an operator watches: failed outbox rows, each stream's last sequence with its consumers'
 * pending, ack floor, redelivered and lag (and, on an event stream, the age of the oldest Event it
 * has not read), and whether core is alive ({@code /healthz}) and ready ({@code /readyz}: NATS
 * connected and the database answering).
 */
final class OperatorRoutes {
  private final Database database;
  private final Supplier<Connection> nats;
  private final NatsGate natsGate;
  private final Supplier<ConsumerLags> lags;

  OperatorRoutes(
      Database database,
      Supplier<Connection> nats,
      NatsGate natsGate,
      Supplier<ConsumerLags> lags) {
    this.database = database;
    this.nats = nats;
    this.natsGate = natsGate;
    this.lags = lags;
  }

  void mount(Javalin app) {
    app.get("/healthz", this::healthz);
    app.get("/readyz", this::readyz);
    app.get("/api/outbox/failed", this::failedOutbox);
    app.get("/api/outbox/backlog", this::backlog);
    app.get("/api/streams", this::streams);
  }

  private void healthz(Context ctx) {
    String waiting = natsGate.notReady();
    if (waiting != null) {
      // Alive: core started before NATS and waits for it; a probe must not restart it for that.
      Json.answer(
          ctx, 200, Json.object("status", "waiting", "nats", natsState(), "reason", waiting));
      return;
    }
    // Alive while NATS is away too: the outbox keeps the Events, and a restart would not help.
    boolean up = connected();
    Json.answer(ctx, 200, Json.object("status", up ? "ok" : "degraded", "nats", natsState()));
  }

  private void readyz(Context ctx) {
    String waiting = natsGate.notReady();
    boolean natsUp = waiting == null && connected();
    String db;
    try {
      database.read(tx -> tx.queryLong("SELECT 1"));
      db = "ok";
    } catch (RuntimeException e) {
      db = "unreachable: " + e.getMessage();
    }
    boolean dbUp = "ok".equals(db);
    if (natsUp && dbUp) {
      Json.answer(ctx, 200, Json.object("status", "ready", "nats", natsState(), "database", db));
      return;
    }
    List<String> down = new ArrayList<>();
    if (waiting != null) {
      down.add(waiting);
    } else if (!natsUp) {
      down.add("nats is " + natsState());
    }
    if (!dbUp) {
      down.add("the database is " + db);
    }
    Map<String, Object> body = Json.error("not ready: " + String.join("; ", down), null);
    body.put("status", "unavailable");
    body.put("nats", natsState());
    body.put("database", db);
    Json.answer(ctx, 503, body);
  }

  private boolean connected() {
    Connection c = nats.get();
    return c != null && c.getStatus() == Connection.Status.CONNECTED;
  }

  /** The client's status in lower case; {@code not_connected} before the first connect. */
  private String natsState() {
    Connection c = nats.get();
    return c == null ? "not_connected" : c.getStatus().name().toLowerCase(java.util.Locale.ROOT);
  }

  private void failedOutbox(Context ctx) {
    int limit = Query.limit(ctx, 100, 1000);
    List<Map<String, Object>> rows =
        database.read(
            tx ->
                tx.query(
                    "SELECT seq, event_id, event_type, project_id, actor_class, actor_id,"
                        + " stream_index, subject, attempts, last_error, created_at_ms FROM outbox"
                        + " WHERE state = ? ORDER BY seq LIMIT "
                        + limit,
                    rs ->
                        Json.object(
                            "seq", rs.getLong(1),
                            "eventId", rs.getString(2),
                            "eventType", rs.getString(3),
                            "projectId", rs.getString(4),
                            "actorClass", rs.getString(5),
                            "actorId", rs.getString(6),
                            "stream", EventStreams.streamName(rs.getInt(7)),
                            "subject", rs.getString(8),
                            "attempts", rs.getInt(9),
                            "lastError", rs.getString(10),
                            "createdAt", Json.timeMs(rs.getLong(11))),
                    OutboxRowState.FAILED.dbName()));
    Json.answer(ctx, 200, Json.object("rows", rows));
  }

  /**
   * Per event stream, the outbox rows not yet published (pending or waiting to retry), failed for
   * good, and the oldest waiting row's age: the first hop of an Event, before any stream holds it.
   */
  private void backlog(Context ctx) {
    // Waiting rows through the publisher's partial index; failed ones as /metrics counts them.
    List<long[]> rows =
        database.read(
            tx -> {
              List<long[]> out =
                  new ArrayList<>(
                      tx.query(
                          "SELECT stream_index, SUM(CASE WHEN state = ? THEN 1 ELSE 0"
                              + " END), SUM(CASE WHEN state = ? THEN 1 ELSE 0 END), 0,"
                              + " MIN(created_at_ms) FROM outbox"
                              + " WHERE state IN (?, ?) GROUP BY stream_index",
                          rs ->
                              new long[] {
                                rs.getInt(1), rs.getLong(2), rs.getLong(3), 0, rs.getLong(5)
                              },
                          OutboxRowState.PENDING.dbName(),
                          OutboxRowState.RETRY_WAIT.dbName(),
                          OutboxRowState.PENDING.dbName(),
                          OutboxRowState.RETRY_WAIT.dbName()));
              out.addAll(
                  tx.query(
                      "SELECT stream_index, COUNT(*) FROM outbox WHERE state = ?"
                          + " GROUP BY stream_index",
                      rs -> new long[] {rs.getInt(1), 0, 0, rs.getLong(2), Long.MAX_VALUE},
                      OutboxRowState.FAILED.dbName()));
              return out;
            });
    List<Object> streams = new ArrayList<>();
    long backlog = 0;
    long failed = 0;
    for (int i = 0; i < EventStreams.STREAM_COUNT; i++) {
      long[] r = new long[] {i, 0, 0, 0, Long.MAX_VALUE};
      for (long[] row : rows) {
        if (row[0] == i) {
          r = new long[] {i, r[1] + row[1], r[2] + row[2], r[3] + row[3], Math.min(r[4], row[4])};
        }
      }
      backlog += r[1] + r[2];
      failed += r[3];
      streams.add(
          Json.object(
              "stream",
              EventStreams.streamName(i),
              "pending",
              r[1],
              "retryWait",
              r[2],
              "failed",
              r[3],
              "backlog",
              r[1] + r[2],
              "oldestWaitingAt",
              r[1] + r[2] == 0 ? null : Json.timeMs(r[4])));
    }
    Json.answer(ctx, 200, Json.object("backlog", backlog, "failed", failed, "streams", streams));
  }

  private void streams(Context ctx) throws IOException {
    natsGate.require();
    if (!connected()) {
      // Fail at once: each JetStream request would wait out its timeout, and a polling page
      // would pile up requests behind them.
      throw new ApiException(503, null, "NATS is " + natsState() + ": the streams cannot be read");
    }
    JetStreamManagement jsm = nats.get().jetStreamManagement();
    List<String> names = new ArrayList<>();
    for (int i = 0; i < EventStreams.STREAM_COUNT; i++) {
      names.add(EventStreams.streamName(i));
    }
    names.add(Queue.STREAM_NAME);
    List<Object> streams = new ArrayList<>();
    ConsumerLags sampled = lags.get();
    for (int i = 0; i < names.size(); i++) {
      streams.add(stream(jsm, names.get(i), i < EventStreams.STREAM_COUNT ? i : -1, sampled));
    }
    Json.answer(ctx, 200, Json.object("streams", streams));
  }

  /** {@code streamIndex} is -1 for the COMMANDS stream; {@code sampled} null without a router. */
  private static Map<String, Object> stream(
      JetStreamManagement jsm, String name, int streamIndex, ConsumerLags sampled)
      throws IOException {
    try {
      StreamInfo info = jsm.getStreamInfo(name);
      List<ConsumerInfo> consumers = new ArrayList<>(jsm.getConsumers(name));
      consumers.sort(Comparator.comparing(ConsumerInfo::getName));
      List<Object> out = new ArrayList<>();
      for (ConsumerInfo c : consumers) {
        Map<String, Object> consumer =
            Json.object(
                "name", c.getName(),
                "pending", c.getNumPending(),
                "ackPending", c.getNumAckPending(),
                "ackFloor", c.getAckFloor().getStreamSequence(),
                "delivered", c.getDelivered().getStreamSequence(),
                "redelivered", c.getRedelivered(),
                // Not yet acknowledged: never delivered plus delivered and unacknowledged.
                "lag", c.getNumPending() + c.getNumAckPending());
        if (streamIndex >= 0) {
          consumer.put("oldestUnreadAgeSeconds", ageOf(sampled, streamIndex, c.getName()));
        }
        out.add(consumer);
      }
      return Json.object(
          "name", name,
          "messages", info.getStreamState().getMsgCount(),
          "firstSequence", info.getStreamState().getFirstSequence(),
          "lastSequence", info.getStreamState().getLastSequence(),
          "consumers", out);
    } catch (JetStreamApiException e) {
      return Json.object("name", name, "error", e.getMessage());
    }
  }

  /** The sampled age in seconds, or null when core has none (no router, not sampled yet). */
  private static Double ageOf(ConsumerLags sampled, int streamIndex, String consumer) {
    if (sampled == null) {
      return null;
    }
    for (Subscription s : Subscription.values()) {
      if (s.durableName().equals(consumer)) {
        double age = sampled.oldestUnreadAgeSeconds(streamIndex, s);
        return Double.isNaN(age) ? null : age;
      }
    }
    return null;
  }
}
