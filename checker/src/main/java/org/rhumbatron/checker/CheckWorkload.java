package org.rhumbatron.checker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.workload.LifecycleWorkload;

/**
 * The demo's workload through the HTTP API only: Projects with live apps, then Changes of {@link
 * LifecycleWorkload#twentyTasks} (overlapping {@code path:} scopes) while a few per Project are
 * open, auto-approved by core. Some creates are sent twice on purpose, and every create is repeated
 * with its client request id when core does not answer, as a client would; each answer's Change id
 * is kept, so the checker can see a second Change for one request.
 */
final class CheckWorkload {
  static final int PROJECTS = 4;
  static final int OPEN_PER_PROJECT = 3;
  static final Duration CALL_WITHIN = Duration.ofMinutes(5);
  private static final long POLL_MILLIS = 250;
  private static final double RESEND_SHARE = 0.1;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final CheckApi api;
  private final Clock clock;
  private final String runId;
  private final Random random;
  private final Map<String, Set<String>> changesByRequest = new ConcurrentHashMap<>();
  private final Set<String> created = ConcurrentHashMap.newKeySet();
  private final List<String> projects = new ArrayList<>();
  private final java.util.concurrent.atomic.AtomicReference<Runnable> afterNextCreate =
      new java.util.concurrent.atomic.AtomicReference<>();
  private volatile boolean stop;
  private volatile Exception failure;

  CheckWorkload(CheckApi api, Clock clock, String runId, long seed) {
    this.api = api;
    this.clock = clock;
    this.runId = runId;
    this.random = new Random(seed);
  }

  Map<String, Set<String>> changesByRequest() {
    return Map.copyOf(changesByRequest);
  }

  Set<String> created() {
    return Set.copyOf(created);
  }

  Exception failure() {
    return failure;
  }

  /**
   * Runs {@code action} once, on the workload's thread, right after the next create is answered:
   * the moment core has committed a Change and its outbox rows but maybe published none.
   */
  void afterNextCreate(Runnable action) {
    afterNextCreate.set(action);
  }

  void stop() {
    stop = true;
  }

  /** Provisions the Projects and their live apps; waits until core made them. */
  /** The Projects the workload provisioned. */
  List<String> projects() {
    return List.copyOf(projects);
  }

  /** The ids of the Projects a run provisions, known before it starts. */
  static List<String> projectIds(String runId) {
    List<String> ids = new ArrayList<>();
    for (int p = 0; p < PROJECTS; p++) {
      ids.add("chk-" + runId + "-p" + p);
    }
    return ids;
  }

  /** The event streams of {@link #projectIds}, each once. */
  static List<Integer> streams(String runId) {
    return projectIds(runId).stream().map(EventStreams::streamIndex).distinct().toList();
  }

  void provision() throws InterruptedException {
    for (String id : projectIds(runId)) {
      projects.add(id);
      ObjectNode body =
          JSON.createObjectNode()
              .put("projectId", id)
              .put("tenantId", "tenant-check")
              .put("name", id);
      expect(api.post("/api/projects", body, CALL_WITHIN), "provision " + id, 200, 202);
    }
    for (String id : projects) {
      awaitProject(id, p -> true);
      expect(
          api.post("/api/projects/" + id + "/app", JSON.createObjectNode(), CALL_WITHIN),
          "app of " + id,
          202);
    }
    for (String id : projects) {
      awaitProject(id, p -> p.path("hasLiveApp").asBoolean());
    }
  }

  private void awaitProject(String id, java.util.function.Predicate<JsonNode> ready)
      throws InterruptedException {
    long deadline = clock.millis() + CALL_WITHIN.toMillis();
    while (true) {
      CheckApi.Answer a = api.get("/api/projects/" + id, CALL_WITHIN);
      if (a.status() == 200 && ready.test(a.body())) {
        return;
      }
      if (clock.millis() > deadline) {
        throw new IllegalStateException("project " + id + " not ready within " + CALL_WITHIN);
      }
      Thread.sleep(POLL_MILLIS);
    }
  }

  /** Creates Changes until {@link #stop}, at most {@link #OPEN_PER_PROJECT} open per Project. */
  void run() {
    try {
      List<List<String>> open = new ArrayList<>();
      projects.forEach(p -> open.add(new ArrayList<>()));
      int n = 0;
      while (!stop) {
        for (int p = 0; p < projects.size() && !stop; p++) {
          open.get(p).removeIf(this::ended);
          while (open.get(p).size() < OPEN_PER_PROJECT && !stop) {
            String request = "chk-" + runId + "-c" + n++;
            open.get(p).add(create(projects.get(p), request));
            if (random.nextDouble() < RESEND_SHARE) {
              create(projects.get(p), request);
            }
          }
        }
        Thread.sleep(POLL_MILLIS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      failure = e;
    }
  }

  private String create(String project, String request) throws InterruptedException {
    ObjectNode body =
        JSON.createObjectNode().put("clientRequestId", request).put("title", "check " + request);
    ArrayNode tasks = body.putArray("tasks");
    for (WorkGraph.TaskSpec t : LifecycleWorkload.twentyTasks().tasks()) {
      ObjectNode task = tasks.addObject().put("key", t.key()).put("title", t.title());
      t.dependsOn().forEach(task.putArray("dependsOn")::add);
      t.resourceScopes().forEach(task.putArray("resourceScopes")::add);
    }
    CheckApi.Answer a = api.post("/api/projects/" + project + "/changes", body, CALL_WITHIN);
    expect(a, "create " + request, 200, 201);
    String changeId = a.body().path("changeId").asText();
    changesByRequest.computeIfAbsent(request, k -> ConcurrentHashMap.newKeySet()).add(changeId);
    created.add(changeId);
    Runnable action = afterNextCreate.getAndSet(null);
    if (action != null) {
      action.run();
    }
    return changeId;
  }

  private boolean ended(String changeId) {
    try {
      CheckApi.Answer a = api.get("/api/changes/" + changeId, CALL_WITHIN);
      return a.status() == 200 && !ChangeInfo.OPEN_STATES.contains(a.body().path("state").asText());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private static void expect(CheckApi.Answer a, String what, int... statuses) {
    for (int s : statuses) {
      if (a.status() == s) {
        return;
      }
    }
    throw new IllegalStateException(what + ": core answered " + a.status() + " " + a.body());
  }
}
