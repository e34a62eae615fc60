package org.rhumbatron.api;

import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import java.sql.SQLException;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.lifecycle.UnknownItemException;
import org.rhumbatron.lifecycle.changes.WorkGraphException;
import org.rhumbatron.lifecycle.tasks.TaskNotHeldException;
import org.rhumbatron.platform.cluster.FencedException;
import org.rhumbatron.platform.queue.CommandSendException;
import org.rhumbatron.router.deadletter.DeadLetterException;
import org.rhumbatron.router.deadletter.DeadLetterNotFoundException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every failure becomes the one error shape with its status: a bad request 400, no or a wrong token
 * 401, no token configured 403, an unknown id or route 404, a refusal of the state machine 409 (a
 * Task the Agent does not hold, a closed or poison dead letter), 413 for a large body, 503 with
 * {@code Retry-After} when NATS, an actor or the database did not answer, the node lost the duty
 * the request needed or is stopping, 500 for a bug.
 */
final class ApiErrors {
  private static final Logger log = LoggerFactory.getLogger(ApiErrors.class);

  private ApiErrors() {}

  static void register(Javalin app) {
    app.exception(ApiException.class, (e, ctx) -> send(ctx, e.status(), e.getMessage(), e.field()));
    app.exception(WorkGraphException.class, (e, ctx) -> send(ctx, 400, e.getMessage(), "tasks"));
    app.exception(UnknownItemException.class, (e, ctx) -> send(ctx, 404, e.getMessage(), null));
    app.exception(TaskNotHeldException.class, (e, ctx) -> send(ctx, 409, e.getMessage(), null));
    app.exception(
        LifecycleException.class,
        (e, ctx) -> send(ctx, e.permanent() ? 409 : 503, e.getMessage(), null));
    app.exception(
        DeadLetterNotFoundException.class, (e, ctx) -> send(ctx, 404, e.getMessage(), null));
    app.exception(DeadLetterException.class, (e, ctx) -> send(ctx, 409, e.getMessage(), null));
    app.exception(CommandSendException.class, (e, ctx) -> send(ctx, 503, e.getMessage(), null));
    app.exception(
        java.io.IOException.class,
        (e, ctx) -> send(ctx, 503, "NATS did not answer: " + e.getMessage(), null));
    app.exception(
        HttpResponseException.class,
        (e, ctx) -> {
          int status = e.getStatus();
          String message =
              switch (status) {
                case 404 -> "no route " + ctx.method() + " " + ctx.path();
                case 405 -> allow(ctx, e);
                case 413 -> "request body larger than " + JsonBody.MAX_BYTES + " bytes";
                default -> e.getMessage();
              };
          send(ctx, status, message, null);
        });
    app.exception(
        Exception.class,
        (e, ctx) -> {
          String retryable = retryable(e);
          if (retryable != null) {
            log.warn("{} {} answered 503: {}", ctx.method(), ctx.path(), retryable);
            send(ctx, 503, retryable, null);
            return;
          }
          log.error("{} {} failed", ctx.method(), ctx.path(), e);
          send(ctx, 500, "internal error: " + e.getClass().getSimpleName(), null);
        });
  }

  /**
   * Why {@code e} is worth a retry, or null: this node lost the duty the request needed (another
   * node holds it now), or the database did not answer or rolled back a conflict.
   */
  static String retryable(Throwable e) {
    FencedException fenced = FencedException.in(e);
    if (fenced != null) {
      return "this node no longer holds " + fenced.duty().key() + ": retry";
    }
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof java.net.ConnectException
          || t instanceof SQLException s && retryableState(s.getSQLState())) {
        return "the database is unavailable: " + t.getMessage();
      }
    }
    return null;
  }

  /** Connection failures (08), server shutting down (57P0x), too many connections, rollbacks. */
  private static boolean retryableState(String state) {
    return state != null
        && (state.startsWith("08")
            || state.startsWith("57P0")
            || state.equals("53300")
            || state.startsWith("40"));
  }

  /** Sets {@code Allow} to the methods the path takes and says them in the message. */
  private static String allow(Context ctx, HttpResponseException e) {
    // Javalin names them in the one detail of its 405 (its key depends on the Accept header).
    String methods = e.getDetails().values().stream().findFirst().orElse("");
    ctx.header("Allow", methods);
    return "method " + ctx.method() + " not allowed on " + ctx.path() + "; allowed: " + methods;
  }

  private static void send(Context ctx, int status, String message, String field) {
    Json.answer(ctx, status, Json.error(message, field));
  }
}
