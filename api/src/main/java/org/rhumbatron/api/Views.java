package org.rhumbatron.api;

import java.util.List;
import java.util.Map;
import org.rhumbatron.lifecycle.LifecycleOverview.CandidateSummary;
import org.rhumbatron.lifecycle.LifecycleOverview.ChangeSummary;
import org.rhumbatron.lifecycle.LifecycleOverview.ProjectSummary;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.projects.ProjectInfo;
import org.rhumbatron.lifecycle.tasks.TaskInfo;
import org.rhumbatron.router.deadletter.DeadLetter;

/** How the API shows the lifecycle's rows: the JSON of docs/api.md, field for field. */
final class Views {
  private Views() {}

  static Map<String, Object> project(ProjectInfo p) {
    return Json.object(
        "projectId", p.projectId(),
        "tenantId", p.tenantId(),
        "name", p.name(),
        "status", p.status().dbName(),
        "canonicalGeneration", p.canonicalGeneration(),
        "hasLiveApp", p.hasLiveApp());
  }

  /** A Project of the list: with how many of its Changes are open. */
  static Map<String, Object> project(ProjectSummary p) {
    Map<String, Object> out = project(p.project());
    out.put("openChanges", p.openChanges());
    return out;
  }

  /** A Change of the list: with its age and progress (Tasks completed of all). */
  static Map<String, Object> change(ChangeSummary s) {
    Map<String, Object> out = change(s.change());
    out.put("createdAt", Json.time(s.createdAt()));
    out.put("endedAt", Json.time(s.endedAt()));
    out.put("tasksCompleted", s.tasksDone());
    out.put("tasksTotal", s.tasksTotal());
    return out;
  }

  static Map<String, Object> candidate(CandidateSummary c) {
    return Json.object(
        "candidateId", c.candidateId(),
        "baseGeneration", c.baseGeneration(),
        "state", c.state(),
        "createdAt", Json.time(c.createdAt()));
  }

  static Map<String, Object> change(ChangeInfo c) {
    return Json.object(
        "changeId", c.changeId(),
        "projectId", c.projectId(),
        "clientRequestId", c.clientRequestId(),
        "title", c.title(),
        "state", c.state(),
        "reason", c.reason());
  }

  static Map<String, Object> change(ChangeInfo c, List<TaskInfo> tasks) {
    Map<String, Object> out = change(c);
    out.put("tasks", tasks.stream().map(Views::task).toList());
    return out;
  }

  static Map<String, Object> task(TaskInfo t) {
    return Json.object(
        "taskId", t.taskId(),
        "changeId", t.changeId(),
        "key", t.key(),
        "title", t.title(),
        "state", t.state(),
        "dependsOn", t.dependsOn(),
        "resourceScopes", t.resourceScopes(),
        "agentId", t.agentId(),
        "attempt", t.attempt(),
        "lastError", t.lastError(),
        "endReason", t.endReason());
  }

  static Map<String, Object> deadLetter(DeadLetter d) {
    Map<String, Object> out =
        Json.object(
            "id", d.id(),
            "commandId", d.commandId(),
            "kind", d.kind(),
            "commandType", d.commandType(),
            "originQueue", d.originQueue(),
            "reason", d.reason(),
            "deliveryCount", d.deliveryCount(),
            "attempt", d.attempt(),
            "projectId", d.projectId(),
            "changeId", d.changeId(),
            "taskId", d.taskId(),
            "status", d.status(),
            "resolution", d.resolution(),
            "resolvedBy", d.resolvedBy(),
            "resolvedAt", Json.time(d.resolvedAt()),
            "createdAt", Json.time(d.createdAt()));
    out.put("retriedBy", d.retriedBy());
    out.put("retriedAt", Json.time(d.retriedAt()));
    out.put("retriedAttempt", d.retriedAttempt());
    out.put("command", Json.embedded(d.command()));
    return out;
  }
}
