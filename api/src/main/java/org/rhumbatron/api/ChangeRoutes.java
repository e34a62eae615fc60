package org.rhumbatron.api;

import io.javalin.Javalin;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.LifecycleOverview;
import org.rhumbatron.lifecycle.candidates.Approval;
import org.rhumbatron.lifecycle.candidates.Candidates;
import org.rhumbatron.lifecycle.changes.ChangeCreated;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.lifecycle.changes.WorkGraph.TaskSpec;
import org.rhumbatron.lifecycle.projects.ProjectInfo;

/**
 * Changes: create idempotently on {@code (projectId, clientRequestId)} (201 the first time, 200
 * with the first Change on a repeat), list, read with Tasks, approve, decline, cancel.
 */
final class ChangeRoutes {
  static final List<String> STATES =
      Arrays.stream(ChangeState.values()).map(ChangeState::dbName).toList();
  private static final int MAX_REQUEST_ID = 200;

  private final Lifecycle lifecycle;
  private final LifecycleOverview overview;
  private final ProjectRoutes projects;
  private final NatsGate natsGate;

  ChangeRoutes(
      Lifecycle lifecycle, LifecycleOverview overview, ProjectRoutes projects, NatsGate natsGate) {
    this.lifecycle = lifecycle;
    this.overview = overview;
    this.projects = projects;
    this.natsGate = natsGate;
  }

  void mount(Javalin app) {
    app.post("/api/projects/{projectId}/changes", this::create);
    app.get("/api/projects/{projectId}/changes", this::list);
    app.get("/api/changes/{changeId}", ctx -> Json.answer(ctx, 200, withTasks(find(ctx))));
    app.post("/api/changes/{changeId}/approve", this::approve);
    app.post("/api/changes/{changeId}/decline", this::decline);
    app.post("/api/changes/{changeId}/cancel", this::cancel);
  }

  /** The Change of the path, or 404. */
  ChangeInfo find(Context ctx) {
    String id = ctx.pathParam("changeId");
    return lifecycle
        .changes()
        .change(id)
        .orElseThrow(() -> ApiException.notFound("unknown change " + id));
  }

  private Object withTasks(ChangeInfo change) {
    return Views.change(change, lifecycle.changes().tasks(change.changeId()));
  }

  private void create(Context ctx) {
    ProjectInfo project = projects.find(ctx);
    JsonBody body = JsonBody.read(ctx, "clientRequestId", "title", "tasks");
    String requestId = body.text("clientRequestId");
    if (requestId.length() > MAX_REQUEST_ID) {
      throw ApiException.badRequest("clientRequestId", "at most " + MAX_REQUEST_ID + " characters");
    }
    String title = body.optionalText("title");
    List<TaskSpec> tasks = new ArrayList<>();
    for (JsonBody t : body.objects("tasks", "key", "title", "dependsOn", "resourceScopes")) {
      tasks.add(
          new TaskSpec(
              t.text("key"),
              t.optionalText("title"),
              t.textList("dependsOn"),
              t.textList("resourceScopes")));
    }
    // A bad graph throws WorkGraphException here, before anything is written.
    ChangeCreated created =
        Await.result(
            lifecycle
                .changes()
                .create(project.projectId(), requestId, title, new WorkGraph(tasks)));
    ctx.header("Location", "/api/changes/" + created.change().changeId());
    Json.answer(ctx, created.created() ? 201 : 200, withTasks(created.change()));
  }

  private void list(Context ctx) {
    ProjectInfo project = projects.find(ctx);
    String state = Query.oneOf(ctx, "state", null, STATES);
    int limit = Query.limit(ctx, 100, 1000);
    List<Object> changes = new ArrayList<>();
    for (LifecycleOverview.ChangeSummary c : overview.changes(project.projectId(), state, limit)) {
      changes.add(Views.change(c));
    }
    Json.answer(ctx, 200, Json.object("projectId", project.projectId(), "changes", changes));
  }

  private void approve(Context ctx) {
    ChangeInfo change = find(ctx);
    JsonBody.read(ctx);
    Optional<Candidates.Promotion> before = promotedBefore(change);
    if (before.isPresent()) {
      // A repeat (a client that lost the first answer retries) is the seed's already_promoted,
      // not a refusal: the approval it asks for holds.
      answerApproval(ctx, "already_promoted", before.get().generation(), before.get().releaseId());
      return;
    }
    // An approval may send release.start or a rebase after it commits: refuse it up front.
    natsGate.require();
    Approval approval = Await.result(lifecycle.approvals().approve(change.changeId()));
    answerApproval(
        ctx,
        approval.promotion().name().toLowerCase(java.util.Locale.ROOT),
        approval.generation(),
        approval.releaseId());
  }

  /**
   * The generation and release (or null) of a Change promoted before: one that is releasing or
   * completed through an approval. Empty for any other state, which the lifecycle refuses (409).
   */
  private Optional<Candidates.Promotion> promotedBefore(ChangeInfo change) {
    if (change.changeState() != ChangeState.COMPLETED
        && change.changeState() != ChangeState.RELEASING) {
      return Optional.empty();
    }
    return lifecycle.candidates().promotion(change.changeId());
  }

  private void answerApproval(Context ctx, String promotion, long generation, String releaseId) {
    String changeId = ctx.pathParam("changeId");
    Json.answer(
        ctx,
        200,
        Json.object(
            "promotion",
            promotion,
            "generation",
            generation,
            "releaseId",
            releaseId,
            "change",
            Views.change(lifecycle.changes().change(changeId).orElseThrow())));
  }

  private void decline(Context ctx) {
    ChangeInfo change = find(ctx);
    JsonBody.read(ctx);
    boolean changed = Await.result(lifecycle.approvals().decline(change.changeId()));
    answerChanged(ctx, change.changeId(), changed);
  }

  private void cancel(Context ctx) {
    ChangeInfo change = find(ctx);
    JsonBody.read(ctx);
    boolean changed = Await.result(lifecycle.ends().cancel(change.changeId()));
    answerChanged(ctx, change.changeId(), changed);
  }

  private void answerChanged(Context ctx, String changeId, boolean changed) {
    Json.answer(
        ctx,
        200,
        Json.object(
            "changed",
            changed,
            "change",
            Views.change(lifecycle.changes().change(changeId).orElseThrow())));
  }
}
