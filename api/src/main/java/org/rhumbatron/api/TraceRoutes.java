package org.rhumbatron.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.javalin.Javalin;
import io.javalin.http.Context;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Tx;

/**
 * {@code GET /api/trace/{id}}: the causal tree around an Event or Command id, from the root of what
 * caused it down to all it caused. It reads what the database keeps of the id's project: every
 * Event envelope in the outbox (rows are never deleted) and the Commands of its dead letters; see
 * {@link CausalTrace} for how the links are made.
 */
final class TraceRoutes {
  /** Outbox rows of one project read at most, the newest; older ones drop out of a trace. */
  static final int MAX_EVENTS = 100_000;

  private final Database database;

  TraceRoutes(Database database) {
    this.database = database;
  }

  void mount(Javalin app) {
    app.get("/api/trace/{id}", this::trace);
  }

  private void trace(Context ctx) {
    String id = ctx.pathParam("id");
    String projectId =
        database
            .read(tx -> projectOf(tx, id))
            .orElseThrow(() -> ApiException.notFound("no Event or Command with id " + id));
    CausalTrace graph = database.read(tx -> load(tx, projectId));
    if (!graph.contains(id)) {
      throw ApiException.notFound("no Event or Command with id " + id);
    }
    Map<String, Object> body = Json.object("id", id, "projectId", projectId);
    body.putAll(graph.tree(graph.rootOf(id), id));
    Json.answer(ctx, 200, body);
  }

  /** The project whose Events or dead letters hold the id, through the id's indexed columns. */
  private static Optional<String> projectOf(Tx tx, String id) throws java.sql.SQLException {
    Optional<String> p = first(tx, "SELECT project_id FROM outbox WHERE event_id = ?", id);
    if (p.isEmpty()) {
      p = first(tx, "SELECT project_id FROM dead_letters WHERE command_id = ?", id);
    }
    String event = CausalTrace.eventOf(id);
    if (p.isEmpty() && event != null) {
      p = first(tx, "SELECT project_id FROM outbox WHERE event_id = ?", event);
    }
    if (p.isEmpty() && id.startsWith("cmd_")) {
      // A Command without a row: some Event names it as causedBy (a scan of the feed's text).
      p =
          first(
              tx,
              "SELECT project_id FROM project_events WHERE event LIKE ? ESCAPE '!'",
              "%\"causedBy\":\"" + likeEscaped(id) + "\"%");
    }
    return p;
  }

  private static Optional<String> first(Tx tx, String sql, String arg)
      throws java.sql.SQLException {
    return tx.queryFirst(sql, rs -> rs.getString(1), arg);
  }

  private static String likeEscaped(String s) {
    return s.replace("!", "!!").replace("%", "!%").replace("_", "!_");
  }

  private static CausalTrace load(Tx tx, String projectId) throws java.sql.SQLException {
    CausalTrace graph = new CausalTrace();
    List<byte[]> payloads =
        new ArrayList<>(
            tx.query(
                "SELECT payload FROM outbox WHERE project_id = ? ORDER BY seq DESC LIMIT "
                    + MAX_EVENTS,
                rs -> rs.getBytes(1),
                projectId));
    Collections.reverse(payloads); // oldest first: children in the order they were written
    for (byte[] payload : payloads) {
      JsonNode event = parse(payload);
      if (event != null) {
        graph.addEvent(event);
      }
    }
    tx.query(
        "SELECT id, status, command FROM dead_letters WHERE project_id = ? AND kind = 'command'"
            + " ORDER BY id",
        rs -> {
          Object command = Json.embedded(rs.getString(3));
          if (command instanceof JsonNode c) {
            graph.addDeadLetter(c, rs.getLong(1), rs.getString(2));
          }
          return null;
        },
        projectId);
    graph.link();
    return graph;
  }

  private static JsonNode parse(byte[] payload) {
    try {
      return Json.MAPPER.readTree(payload);
    } catch (IOException e) {
      return null; // a row that is not an envelope (a hand-made test row) is no node
    }
  }
}
