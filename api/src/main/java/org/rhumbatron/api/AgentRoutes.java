package org.rhumbatron.api;

import io.javalin.Javalin;
import io.javalin.http.Context;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.regex.Pattern;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.tasks.TaskInfo;
import org.rhumbatron.lifecycle.tasks.TaskNotHeldException;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.lifecycle.tasks.TaskToken;
import org.rhumbatron.protocol.IdFormat;

/**
 * The reports of an Agent outside core on the Task it was woken for (see {@code
 * WebhookAgentRuntime}): running, an intent, a claim and its release, the changeset, completed or
 * failed. Each names the attempt it was admitted for; the lifecycle checks Agent, attempt and state
 * in the owning shard's transaction, and a report from an Agent that does not hold the Task is 409
 * with nothing written. Every report is idempotent, so an Agent may repeat one. An Agent reports
 * with the task token its wake carried, which admits that attempt's reports only.
 */
final class AgentRoutes {
  private static final Pattern RESOURCE = Pattern.compile(IdFormat.RESOURCE);
  private static final String BASE = "/api/agents/{agentId}/tasks/{taskId}/";

  /** The report routes, where a task token may stand in for the operator's token. */
  static final Pattern REPORT_PATH =
      Pattern.compile(
          "/api/agents/[^/]+/tasks/[^/]+/(running|intents|claims|claims/release|changeset"
              + "|completed|failed)");

  private final Lifecycle lifecycle;

  AgentRoutes(Lifecycle lifecycle) {
    this.lifecycle = lifecycle;
  }

  void mount(Javalin app) {
    app.post(
        BASE + "running", ctx -> report(ctx, false, (ref, key) -> lifecycle.agents().start(ref)));
    app.post(BASE + "intents", ctx -> report(ctx, true, lifecycle.agents()::declareIntent));
    app.post(BASE + "claims", ctx -> report(ctx, true, lifecycle.agents()::acquireClaim));
    app.post(BASE + "claims/release", this::releaseClaim);
    app.post(BASE + "changeset", this::changeset);
    app.post(
        BASE + "completed",
        ctx -> report(ctx, false, (ref, key) -> lifecycle.agents().complete(ref)));
    app.post(BASE + "failed", this::failed);
  }

  private TaskInfo task(Context ctx) {
    String id = ctx.pathParam("taskId");
    return lifecycle
        .changes()
        .task(id)
        .orElseThrow(() -> ApiException.notFound("unknown task " + id));
  }

  private static TaskRef ref(Context ctx, TaskInfo task, int attempt) {
    return new TaskRef(
        task.projectId(), task.changeId(), task.taskId(), ctx.pathParam("agentId"), attempt);
  }

  /**
   * A report under a task token is the token's own: the token must be core's and unexpired (else
   * 401), name this Task, Agent and attempt, and that attempt must be the one the Task is held on
   * now (else 403). Checked before anything is written; the operator's token goes on to the
   * lifecycle's own checks (409).
   */
  private void authorize(Context ctx, TaskInfo task, TaskRef ref) {
    String token = Principal.of(ctx).map(Principal::taskToken).orElse(null);
    if (token == null) {
      return;
    }
    TaskToken granted =
        lifecycle
            .taskTokens()
            .verify(token)
            .orElseThrow(
                () -> {
                  ctx.header("WWW-Authenticate", "Bearer error=\"invalid_token\"");
                  return new ApiException(
                      401, null, "the task token is not valid: expired or not signed by core");
                });
    if (!granted.covers(ref)) {
      throw new ApiException(
          403,
          null,
          "the task token is for task "
              + granted.taskId()
              + " attempt "
              + granted.attempt()
              + " of agent "
              + granted.agentId()
              + ", not for this report");
    }
    if (!granted.attemptHeld(task)) {
      throw new ApiException(
          403,
          null,
          "the task token's attempt has ended: task "
              + task.taskId()
              + " is "
              + task.state()
              + " on attempt "
              + task.attempt());
    }
  }

  private void report(
      Context ctx, boolean withKey, BiFunction<TaskRef, String, CompletableFuture<?>> action) {
    TaskInfo task = task(ctx);
    JsonBody body = withKey ? JsonBody.read(ctx, "attempt", "key") : JsonBody.read(ctx, "attempt");
    int attempt = body.positiveInt("attempt");
    String key = withKey ? resourceKey(body) : null;
    TaskRef ref = ref(ctx, task, attempt);
    authorize(ctx, task, ref);
    Await.result(action.apply(ref, key));
    answer(ctx, ref, Map.of());
  }

  /**
   * The lifecycle's release writes nothing for a claim the Agent does not hold, so the API checks
   * the holder first and answers 409 as for every other report.
   */
  private void releaseClaim(Context ctx) {
    TaskInfo task = task(ctx);
    JsonBody body = JsonBody.read(ctx, "attempt", "key");
    int attempt = body.positiveInt("attempt");
    String key = resourceKey(body);
    TaskRef ref = ref(ctx, task, attempt);
    authorize(ctx, task, ref);
    if (!ref.agentId().equals(task.agentId()) || attempt != task.attempt() || !task.held()) {
      throw new TaskNotHeldException(
          task.taskId(),
          ref.agentId(),
          "the task is "
              + task.state()
              + " on attempt "
              + task.attempt()
              + " by "
              + task.agentId());
    }
    Await.result(lifecycle.agents().releaseClaim(ref, key));
    answer(ctx, ref, Map.of());
  }

  private static String resourceKey(JsonBody body) {
    String key = body.text("key");
    if (!RESOURCE.matcher(key).matches()) {
      throw ApiException.badRequest(
          "key", "a resource key is 1 to 1024 characters without control characters");
    }
    return key;
  }

  private void changeset(Context ctx) {
    TaskInfo task = task(ctx);
    int attempt = JsonBody.read(ctx, "attempt").positiveInt("attempt");
    TaskRef ref = ref(ctx, task, attempt);
    authorize(ctx, task, ref);
    String changesetId = Await.result(lifecycle.agents().proposeChangeset(ref));
    answer(ctx, ref, Map.of("changesetId", changesetId));
  }

  private void failed(Context ctx) {
    TaskInfo task = task(ctx);
    JsonBody body = JsonBody.read(ctx, "attempt", "error");
    int attempt = body.positiveInt("attempt");
    String error = body.text("error");
    TaskRef ref = ref(ctx, task, attempt);
    authorize(ctx, task, ref);
    Await.result(lifecycle.agents().fail(ref, error));
    answer(ctx, ref, Map.of());
  }

  private void answer(Context ctx, TaskRef ref, Map<String, Object> extra) {
    TaskInfo now = lifecycle.changes().task(ref.taskId()).orElseThrow();
    Map<String, Object> body =
        Json.object("agentId", ref.agentId(), "attempt", ref.attempt(), "task", Views.task(now));
    body.putAll(extra);
    Json.answer(ctx, 200, body);
  }
}
