package org.rhumbatron.api;

import io.javalin.Javalin;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.rhumbatron.coordinator.project.ProjectStatus;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.LifecycleOverview;
import org.rhumbatron.lifecycle.projects.ProjectInfo;
import org.rhumbatron.platform.queue.SendReceipt;
import org.rhumbatron.protocol.IdFormat;

/**
 * Projects: list, provision (project.provision on the integration queue, so 202 with the command
 * id), read, archive, delete, and the live app (app.provision, app.remove).
 */
final class ProjectRoutes {
  static final Pattern ID = Pattern.compile(IdFormat.ID);
  static final List<String> STATUSES = List.of("active", "archived", "deleted");

  private final Lifecycle lifecycle;
  private final LifecycleOverview overview;
  private final NatsGate natsGate;

  ProjectRoutes(Lifecycle lifecycle, LifecycleOverview overview, NatsGate natsGate) {
    this.lifecycle = lifecycle;
    this.overview = overview;
    this.natsGate = natsGate;
  }

  void mount(Javalin app) {
    app.post("/api/projects", this::provision);
    app.get("/api/projects", this::list);
    app.get("/api/projects/{projectId}", ctx -> Json.answer(ctx, 200, Views.project(find(ctx))));
    app.post("/api/projects/{projectId}/archive", this::archive);
    app.delete("/api/projects/{projectId}", this::delete);
    app.post("/api/projects/{projectId}/app", ctx -> appCommand(ctx, true));
    app.delete("/api/projects/{projectId}/app", ctx -> appCommand(ctx, false));
  }

  /** The project of the path, or 404. */
  ProjectInfo find(Context ctx) {
    String id = ctx.pathParam("projectId");
    return lifecycle
        .projects()
        .project(id)
        .orElseThrow(() -> ApiException.notFound("unknown project " + id));
  }

  private void list(Context ctx) {
    String status = Query.oneOf(ctx, "status", null, STATUSES);
    int limit = Query.limit(ctx, 100, 1000);
    List<Object> projects = new ArrayList<>();
    for (LifecycleOverview.ProjectSummary p : overview.projects(status, limit)) {
      projects.add(Views.project(p));
    }
    Json.answer(ctx, 200, Json.object("projects", projects));
  }

  private void provision(Context ctx) {
    JsonBody body = JsonBody.read(ctx, "projectId", "tenantId", "name");
    String projectId = body.text("projectId");
    if (!ID.matcher(projectId).matches()) {
      throw ApiException.badRequest(
          "projectId",
          "1 to 200 letters, digits, '_', '.', ':' or '-', starting with one of the"
              + " first two");
    }
    String tenantId = body.text("tenantId");
    String name = body.text("name");
    var existing = lifecycle.projects().project(projectId);
    if (existing.isPresent()) {
      Json.answer(
          ctx, 200, Json.object("projectId", projectId, "project", Views.project(existing.get())));
      return;
    }
    natsGate.require();
    SendReceipt sent =
        Await.result(lifecycle.commands().provisionProject(projectId, tenantId, name));
    Json.answer(ctx, 202, accepted(projectId, sent));
  }

  private void archive(Context ctx) {
    ProjectInfo project = find(ctx);
    JsonBody.read(ctx);
    boolean changed = Await.result(lifecycle.projects().archive(project.projectId()));
    Json.answer(ctx, 200, changedAnswer(project.projectId(), changed));
  }

  private void delete(Context ctx) {
    ProjectInfo project = find(ctx);
    JsonBody.read(ctx);
    boolean changed = Await.result(lifecycle.projects().delete(project.projectId()));
    Json.answer(ctx, 200, changedAnswer(project.projectId(), changed));
  }

  private void appCommand(Context ctx, boolean provision) {
    ProjectInfo project = find(ctx);
    JsonBody.read(ctx);
    if (project.status() != ProjectStatus.ACTIVE) {
      throw ApiException.conflict(
          "project "
              + project.projectId()
              + " is "
              + project.status().dbName()
              + ": only an active"
              + " project takes an app change");
    }
    natsGate.require();
    SendReceipt sent =
        Await.result(
            provision
                ? lifecycle.commands().provisionApp(project.projectId())
                : lifecycle.commands().removeApp(project.projectId()));
    Json.answer(ctx, 202, accepted(project.projectId(), sent));
  }

  private java.util.Map<String, Object> changedAnswer(String projectId, boolean changed) {
    return Json.object(
        "changed",
        changed,
        "project",
        Views.project(lifecycle.projects().project(projectId).orElseThrow()));
  }

  /** The message id is {@code <queue>:<commandId>}. */
  private static java.util.Map<String, Object> accepted(String projectId, SendReceipt sent) {
    String messageId = sent.messageId();
    return Json.object(
        "projectId",
        projectId,
        "commandId",
        messageId.substring(messageId.indexOf(':') + 1),
        "queue",
        sent.queue().wireName(),
        "duplicate",
        sent.duplicate());
  }
}
