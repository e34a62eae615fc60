package org.rhumbatron.api;

import io.javalin.Javalin;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.queue.SendReceipt;
import org.rhumbatron.router.deadletter.DeadLetter;
import org.rhumbatron.router.deadletter.DeadLetterException;
import org.rhumbatron.router.deadletter.DeadLetterNotFoundException;
import org.rhumbatron.router.deadletter.DeadLetterOperator;
import org.rhumbatron.router.deadletter.DeadLetterStatus;

/**
 * Dead letters: list with filters, groups by command type and reason, and the operator's Retry and
 * Dismiss of one row or of a whole open group. The operator refuses a closed row and the Retry of
 * an event batch (poison batch: dismiss only), answered 409 with its reason.
 */
final class DeadLetterRoutes {
  private static final String SELECT = "SELECT id FROM dead_letters WHERE 1 = 1";
  private static final String DEFAULT_OPERATOR = "api";

  private final DeadLetterOperator operator;
  private final Database database;
  private final NatsGate natsGate;

  DeadLetterRoutes(DeadLetterOperator operator, Database database, NatsGate natsGate) {
    this.operator = operator;
    this.database = database;
    this.natsGate = natsGate;
  }

  void mount(Javalin app) {
    // The group routes come first: "groups" would match {id} too.
    app.get("/api/dead-letters", this::list);
    app.get("/api/dead-letters/groups", this::groups);
    app.post("/api/dead-letters/groups/retry", ctx -> group(ctx, true));
    app.post("/api/dead-letters/groups/dismiss", ctx -> group(ctx, false));
    app.get("/api/dead-letters/{id}", ctx -> Json.answer(ctx, 200, Views.deadLetter(find(ctx))));
    app.post("/api/dead-letters/{id}/retry", this::retry);
    app.post("/api/dead-letters/{id}/dismiss", this::dismiss);
  }

  private DeadLetter find(Context ctx) {
    String raw = ctx.pathParam("id");
    try {
      long id = Long.parseLong(raw);
      return operator.find(id).orElseThrow(() -> new DeadLetterNotFoundException(id));
    } catch (NumberFormatException e) {
      throw ApiException.notFound("unknown dead letter " + raw + " (ids are whole numbers)");
    }
  }

  private void list(Context ctx) {
    String state = Query.oneOf(ctx, "state", "open", List.of("open", "closed", "all"));
    List<Object> args = new ArrayList<>();
    StringBuilder sql = new StringBuilder(SELECT);
    if (!"all".equals(state)) {
      sql.append(" AND status = ?");
      args.add(state);
    }
    filter(ctx, sql, args, "queue", "origin_queue");
    filter(ctx, sql, args, "commandType", "command_type");
    filter(ctx, sql, args, "projectId", "project_id");
    filter(ctx, sql, args, "changeId", "change_id");
    filter(ctx, sql, args, "kind", "kind");
    int limit = Query.limit(ctx, 100, 1000);
    sql.append(" ORDER BY created_at_ms, id LIMIT ").append(limit);
    List<Long> ids =
        database.read(tx -> tx.query(sql.toString(), rs -> rs.getLong(1), args.toArray()));
    List<Object> rows = new ArrayList<>();
    for (long id : ids) {
      operator.find(id).ifPresent(d -> rows.add(Views.deadLetter(d)));
    }
    Json.answer(ctx, 200, Json.object("deadLetters", rows));
  }

  private static void filter(
      Context ctx, StringBuilder sql, List<Object> args, String param, String column) {
    String value = Query.optional(ctx, param);
    if (value != null) {
      sql.append(" AND ").append(column).append(" = ?");
      args.add(value);
    }
  }

  private void groups(Context ctx) {
    String state = Query.oneOf(ctx, "state", "open", List.of("open", "closed", "all"));
    String where = "all".equals(state) ? "" : " WHERE status = '" + state + "'";
    List<Map<String, Object>> groups =
        database.read(
            tx ->
                tx.query(
                    "SELECT command_type, reason, MIN(kind), COUNT(*), MIN(created_at_ms),"
                        + " MAX(created_at_ms) FROM dead_letters"
                        + where
                        + " GROUP BY command_type, reason ORDER BY COUNT(*) DESC, command_type,"
                        + " reason",
                    rs ->
                        Json.object(
                            "commandType", rs.getString(1),
                            "reason", rs.getString(2),
                            "kind", rs.getString(3),
                            "count", rs.getLong(4),
                            "oldestAt", Json.timeMs(rs.getLong(5)),
                            "newestAt", Json.timeMs(rs.getLong(6)))));
    Json.answer(ctx, 200, Json.object("state", state, "groups", groups));
  }

  private void retry(Context ctx) {
    DeadLetter row = find(ctx);
    String by = operatorOf(JsonBody.read(ctx, "operator"));
    natsGate.require();
    SendReceipt sent = operator.retry(row.id(), by);
    Json.answer(
        ctx,
        202,
        Json.object(
            "messageId",
            sent.messageId(),
            "deadLetter",
            Views.deadLetter(operator.find(row.id()).orElseThrow())));
  }

  private void dismiss(Context ctx) {
    DeadLetter row = find(ctx);
    String by = operatorOf(JsonBody.read(ctx, "operator"));
    Json.answer(
        ctx, 200, Json.object("deadLetter", Views.deadLetter(operator.dismiss(row.id(), by))));
  }

  /**
   * Retry or Dismiss of every open row of the group; each row on its own (a refused row does not
   * stop the others). 404 when the group has no open row, 409 when every row was refused.
   */
  private void group(Context ctx, boolean retry) {
    JsonBody body = JsonBody.read(ctx, "commandType", "reason", "operator");
    String commandType = body.nullableText("commandType");
    String reason = body.text("reason");
    String by = operatorOf(body);
    List<Long> ids =
        database.read(
            tx ->
                commandType == null
                    ? tx.query(
                        SELECT
                            + " AND status = ? AND command_type IS NULL AND reason = ?"
                            + " ORDER BY id",
                        rs -> rs.getLong(1),
                        DeadLetterStatus.OPEN.dbName(),
                        reason)
                    : tx.query(
                        SELECT
                            + " AND status = ? AND command_type = ? AND reason = ?"
                            + " ORDER BY id",
                        rs -> rs.getLong(1),
                        DeadLetterStatus.OPEN.dbName(),
                        commandType,
                        reason));
    if (ids.isEmpty()) {
      throw ApiException.notFound(
          "no open dead letter of command type " + commandType + " with reason " + reason);
    }
    if (retry) {
      natsGate.require();
    }
    List<Long> done = new ArrayList<>();
    List<Object> refused = new ArrayList<>();
    for (long id : ids) {
      try {
        if (retry) {
          operator.retry(id, by);
        } else {
          operator.dismiss(id, by);
        }
        done.add(id);
      } catch (DeadLetterException e) {
        refused.add(Json.object("id", id, "error", e.getMessage()));
      }
    }
    if (done.isEmpty()) {
      throw ApiException.conflict(
          "every dead letter of the group was refused; the first: "
              + ((Map<?, ?>) refused.get(0)).get("error"));
    }
    Json.answer(
        ctx,
        200,
        Json.object(
            "commandType",
            commandType,
            "reason",
            reason,
            retry ? "retried" : "dismissed",
            done,
            "refused",
            refused));
  }

  private static String operatorOf(JsonBody body) {
    String by = body.optionalText("operator");
    return by == null ? DEFAULT_OPERATOR : by;
  }
}
