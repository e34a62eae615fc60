package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Flow;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.tasks.TaskInfo;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.server.ApiClient.Answer;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * The HTTP API on a running core (real nats-server, SQLite, simulated Agents): each endpoint's
 * happy path, the token rules of writes, bad requests (400 naming the field), unknown ids (404),
 * oversized bodies (413), the 409s of the state machine, and that nothing is written on an error.
 */
class ApiTest {
  static final String TOKEN = "test-token-1";

  @RegisterExtension static final NatsServerExtension nats = new NatsServerExtension();
  @RegisterExtension static final DatabaseExtension db = DatabaseExtension.sqlite();
  @TempDir static Path data;

  static CoreService core;
  static ApiClient api;

  @BeforeAll
  static void startCore() throws Exception {
    core = TestCores.withToken(nats.url(), data, db.database().url(), TOKEN);
    api = ApiClient.of(core, TOKEN);
  }

  @AfterAll
  static void stopCore() {
    if (core != null) {
      core.close();
    }
  }

  static Map<String, Object> task(String key, List<String> dependsOn, List<String> scopes) {
    return Map.of(
        "key", key, "title", "Task " + key, "dependsOn", dependsOn, "resourceScopes", scopes);
  }

  static void provision(String projectId) throws Exception {
    Answer a =
        api.post(
            "/api/projects",
            Map.of("projectId", projectId, "tenantId", "t1", "name", "P " + projectId));
    assertThat(a.status()).isEqualTo(202);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> api.get("/api/projects/" + projectId).status() == 200);
  }

  static String createChange(String projectId, String requestId, int chain) throws Exception {
    List<Map<String, Object>> tasks = new ArrayList<>();
    for (int i = 0; i < chain; i++) {
      tasks.add(
          task(
              "t" + i,
              i == 0 ? List.of() : List.of("t" + (i - 1)),
              List.of("path:src/" + projectId + "/" + i)));
    }
    Answer a =
        api.post(
            "/api/projects/" + projectId + "/changes",
            Map.of("clientRequestId", requestId, "title", "change " + requestId, "tasks", tasks));
    assertThat(a.status()).as(a.text()).isEqualTo(201);
    return a.body().path("changeId").asText();
  }

  static String awaitChangeState(String changeId, String state) {
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> api.get("/api/changes/" + changeId).body().path("state").asText().equals(state));
    return state;
  }

  static long outboxRows(String projectId) {
    return core.database()
        .read(tx -> tx.queryLong("SELECT COUNT(*) FROM outbox WHERE project_id = ?", projectId));
  }

  @Test
  void aProjectIsProvisionedReadArchivedAndDeleted() throws Exception {
    Answer sent =
        api.post("/api/projects", Map.of("projectId", "p-proj", "tenantId", "t1", "name", "One"));
    assertThat(sent.status()).isEqualTo(202);
    assertThat(sent.body().path("commandId").asText()).isEqualTo("cmd_project.provision_p-proj");
    assertThat(sent.body().path("queue").asText()).isEqualTo("integration");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> api.get("/api/projects/p-proj").status() == 200);
    JsonNode project = api.get("/api/projects/p-proj").body();
    assertThat(project.path("name").asText()).isEqualTo("One");
    assertThat(project.path("status").asText()).isEqualTo("active");
    assertThat(project.path("hasLiveApp").asBoolean()).isFalse();
    Answer again =
        api.post("/api/projects", Map.of("projectId", "p-proj", "tenantId", "t1", "name", "One"));
    assertThat(again.status()).isEqualTo(200);
    assertThat(again.body().path("project").path("projectId").asText()).isEqualTo("p-proj");

    Answer app = api.post("/api/projects/p-proj/app", "");
    assertThat(app.status()).isEqualTo(202);
    assertThat(app.body().path("commandId").asText()).startsWith("cmd_");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> api.get("/api/projects/p-proj").body().path("hasLiveApp").asBoolean());
    assertThat(api.delete("/api/projects/p-proj/app").status()).isEqualTo(202);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> !api.get("/api/projects/p-proj").body().path("hasLiveApp").asBoolean());

    Answer archived = api.post("/api/projects/p-proj/archive", "");
    assertThat(archived.status()).isEqualTo(200);
    assertThat(archived.body().path("changed").asBoolean()).isTrue();
    assertThat(archived.body().path("project").path("status").asText()).isEqualTo("archived");
    assertThat(api.post("/api/projects/p-proj/archive", "").body().path("changed").asBoolean())
        .isFalse();
    assertThat(api.post("/api/projects/p-proj/app", "").status()).isEqualTo(409);
    Answer deleted = api.delete("/api/projects/p-proj");
    assertThat(deleted.status()).isEqualTo(200);
    assertThat(deleted.body().path("project").path("status").asText()).isEqualTo("deleted");
  }

  @Test
  void projectsAreListedInIdOrderByStatusAndLimit() throws Exception {
    provision("p-list-a");
    provision("p-list-b");
    assertThat(api.post("/api/projects/p-list-b/archive", "").status()).isEqualTo(200);

    List<String> all = projectIds(api.get("/api/projects?limit=1000"));
    assertThat(all).contains("p-list-a", "p-list-b");
    assertThat(all).isSorted();
    List<String> archived = projectIds(api.get("/api/projects?status=archived"));
    assertThat(archived).contains("p-list-b").doesNotContain("p-list-a");
    List<String> active = projectIds(api.get("/api/projects?status=active"));
    assertThat(active).contains("p-list-a").doesNotContain("p-list-b");
    assertThat(projectIds(api.get("/api/projects?limit=1"))).hasSize(1);

    Answer badStatus = api.get("/api/projects?status=gone");
    assertThat(badStatus.status()).isEqualTo(400);
    assertThat(badStatus.text()).contains("status");
    assertThat(api.get("/api/projects?limit=0").status()).isEqualTo(400);
  }

  private static List<String> projectIds(Answer a) {
    assertThat(a.status()).as(a.text()).isEqualTo(200);
    List<String> ids = new ArrayList<>();
    a.body().path("projects").forEach(p -> ids.add(p.path("projectId").asText()));
    return ids;
  }

  /**
   * A Change awaiting approval and a running 20-Task one, then the Project is deleted (or
   * archived): both end cancelled with the reason, the approval is refused and the canonical
   * generation stays at 0.
   */
  private void changesEndWithTheirProject(String projectId, boolean archive) throws Exception {
    provision(projectId);
    String waiting = createChange(projectId, "req-wait", 2);
    awaitChangeState(waiting, "awaiting_approval");
    String running = createChange(projectId, "req-run", 20);
    Answer ended =
        archive
            ? api.post("/api/projects/" + projectId + "/archive", "")
            : api.delete("/api/projects/" + projectId);
    assertThat(ended.status()).as(ended.text()).isEqualTo(200);
    String reason = archive ? "project_archived" : "project_deleted";
    for (String changeId : List.of(waiting, running)) {
      Answer read = api.get("/api/changes/" + changeId);
      assertThat(read.body().path("state").asText()).as(read.text()).isEqualTo("cancelled");
      assertThat(read.body().path("reason").asText()).isEqualTo(reason);
      read.body()
          .path("tasks")
          .forEach(
              t ->
                  assertThat(t.path("state").asText())
                      .as(t.toString())
                      .isIn("completed", "cancelled"));
    }
    Answer approve = api.post("/api/changes/" + waiting + "/approve", "");
    assertThat(approve.status()).as(approve.text()).isEqualTo(409);
    assertThat(approve.text()).contains("is cancelled");
    JsonNode project = api.get("/api/projects/" + projectId).body();
    project = project.has("project") ? project.path("project") : project;
    assertThat(project.path("canonicalGeneration").asLong()).as(project.toString()).isZero();
    assertThat(project.path("status").asText()).isEqualTo(archive ? "archived" : "deleted");
  }

  @Test
  void deletingAProjectEndsItsChangesAndItsApprovalIsRefused() throws Exception {
    changesEndWithTheirProject("p-deleted", false);
  }

  @Test
  void archivingAProjectEndsItsChangesAndItsApprovalIsRefused() throws Exception {
    changesEndWithTheirProject("p-archived", true);
  }

  @Test
  void aChangeIsCreatedReadListedApprovedAndItsFeedPaged() throws Exception {
    provision("p-chg");
    String changeId = createChange("p-chg", "req-1", 3);
    Answer read = api.get("/api/changes/" + changeId);
    assertThat(read.status()).isEqualTo(200);
    assertThat(read.body().path("projectId").asText()).isEqualTo("p-chg");
    assertThat(read.body().path("clientRequestId").asText()).isEqualTo("req-1");
    assertThat(read.body().path("tasks")).hasSize(3);
    assertThat(read.body().path("tasks").get(1).path("dependsOn").get(0).asText())
        .isEqualTo(changeId + ":t0");
    Answer repeat =
        api.post(
            "/api/projects/p-chg/changes",
            Map.of("clientRequestId", "req-1", "tasks", List.of(task("x", List.of(), List.of()))));
    assertThat(repeat.status()).isEqualTo(200);
    assertThat(repeat.body().path("changeId").asText()).isEqualTo(changeId);
    assertThat(repeat.body().path("tasks")).hasSize(3); // the first Change, not the repeat's graph

    awaitChangeState(changeId, "awaiting_approval");
    Answer list = api.get("/api/projects/p-chg/changes?state=awaiting_approval");
    assertThat(list.body().path("changes")).hasSize(1);
    assertThat(list.body().path("changes").get(0).path("changeId").asText()).isEqualTo(changeId);
    assertThat(api.get("/api/projects/p-chg/changes?state=completed").body().path("changes"))
        .isEmpty();
    Answer approved = api.post("/api/changes/" + changeId + "/approve", "");
    assertThat(approved.status()).as(approved.text()).isEqualTo(200);
    assertThat(approved.body().path("promotion").asText()).isEqualTo("promoted");
    assertThat(approved.body().path("generation").asLong()).isEqualTo(1);
    assertThat(approved.body().path("change").path("state").asText()).isEqualTo("completed");
    Answer repeat2 = api.post("/api/changes/" + changeId + "/approve", "");
    assertThat(repeat2.status()).as(repeat2.text()).isEqualTo(200);
    assertThat(repeat2.body().path("promotion").asText()).isEqualTo("already_promoted");
    assertThat(repeat2.body().path("generation").asLong()).isEqualTo(1);

    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                api.get("/api/projects/p-chg/view")
                        .body()
                        .path("counts")
                        .path("change")
                        .path("completed")
                        .asLong()
                    == 1);
    JsonNode view = api.get("/api/projects/p-chg/view").body();
    assertThat(view.path("counts").path("task").path("completed").asLong()).isEqualTo(3);
    assertThat(view.path("eventsApplied").asLong()).isPositive();

    long feedRows =
        core.database()
            .read(
                tx ->
                    tx.queryLong(
                        "SELECT COUNT(*) FROM project_events WHERE project_id = ?", "p-chg"));
    List<String> paged = new ArrayList<>();
    String cursor = null;
    for (int page = 0; page < 1000; page++) {
      Answer a =
          api.get(
              "/api/projects/p-chg/events?limit=4" + (cursor == null ? "" : "&after=" + cursor));
      assertThat(a.status()).isEqualTo(200);
      JsonNode events = a.body().path("events");
      assertThat(events.size()).isLessThanOrEqualTo(4);
      events.forEach(e -> paged.add(e.path("eventId").asText()));
      if (events.isEmpty()) {
        assertThat(a.body().path("next").asText()).isEqualTo(cursor); // poll with the same one
        break;
      }
      assertThat(events.get(0).path("event").path("eventId").asText())
          .isEqualTo(events.get(0).path("eventId").asText());
      cursor = a.body().path("next").asText();
    }
    assertThat(paged).hasSize((int) feedRows).doesNotHaveDuplicates();
    Answer bad = api.get("/api/projects/p-chg/events?after=not-a-cursor");
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.body().path("field").asText()).isEqualTo("after");
    assertThat(api.get("/api/projects/p-chg/events?limit=0").body().path("field").asText())
        .isEqualTo("limit");
  }

  @Test
  void aChangeIsDeclinedAndAnotherCancelled() throws Exception {
    provision("p-end");
    String declined = createChange("p-end", "req-d", 1);
    awaitChangeState(declined, "awaiting_approval");
    Answer d = api.post("/api/changes/" + declined + "/decline", "");
    assertThat(d.status()).isEqualTo(200);
    assertThat(d.body().path("changed").asBoolean()).isTrue();
    assertThat(d.body().path("change").path("state").asText()).isEqualTo("declined");

    String cancelled = createChange("p-end", "req-c", 8);
    Answer c = api.post("/api/changes/" + cancelled + "/cancel", "");
    assertThat(c.status()).isEqualTo(200);
    assertThat(c.body().path("change").path("state").asText()).isEqualTo("cancelled");
    assertThat(
            api.post("/api/changes/" + cancelled + "/cancel", "")
                .body()
                .path("changed")
                .asBoolean())
        .isFalse();
    Answer late = api.post("/api/changes/" + declined + "/cancel", "");
    assertThat(late.status()).isEqualTo(409);
    assertThat(late.error()).contains("declined");
  }

  @Test
  void aWriteWithoutTheTokenOrWithAWrongOneIs401AndWritesNothing() throws Exception {
    Map<String, String> body = Map.of("projectId", "p-auth", "tenantId", "t1", "name", "A");
    Answer none = api.withToken(null).post("/api/projects", body);
    assertThat(none.status()).isEqualTo(401);
    assertThat(none.error()).contains("Authorization: Bearer");
    Answer wrong = api.withToken("test-token-2").post("/api/projects", body);
    assertThat(wrong.status()).isEqualTo(401);
    assertThat(wrong.error()).isEqualTo("the bearer token is unknown or revoked");
    assertThat(wrong.body().has("field")).isTrue();
    assertThat(api.withToken(null).get("/api/streams").status()).isEqualTo(200); // reads are open
    // A provision sent after them is done: one of them that got through would be done too.
    provision("p-auth-after");
    assertThat(core.lifecycle().projects().project("p-auth")).isEmpty();
  }

  @Test
  void badRequestsAre400NamingTheFieldAndWriteNothing() throws Exception {
    provision("p-bad");
    String path = "/api/projects/p-bad/changes";
    Answer malformed = api.post(path, "{\"clientRequestId\": ");
    assertThat(malformed.status()).isEqualTo(400);
    assertThat(malformed.error()).startsWith("malformed JSON");
    assertThat(api.post(path, "[1, 2]").error()).contains("must be a JSON object");
    Answer unknown =
        api.post(
            path,
            Map.of(
                "clientRequestId", "r", "tasks", List.of(task("a", List.of(), List.of())), "x", 1));
    assertThat(unknown.status()).isEqualTo(400);
    assertThat(unknown.body().path("field").asText()).isEqualTo("x");
    assertThat(unknown.error()).contains("unknown field");
    Answer unknownNested =
        api.post(
            path,
            Map.of(
                "clientRequestId", "r", "tasks", List.of(Map.of("key", "a", "scopes", List.of()))));
    assertThat(unknownNested.body().path("field").asText()).isEqualTo("tasks[0].scopes");
    Answer missing = api.post(path, Map.of("tasks", List.of(task("a", List.of(), List.of()))));
    assertThat(missing.status()).isEqualTo(400);
    assertThat(missing.body().path("field").asText()).isEqualTo("clientRequestId");
    assertThat(missing.error()).contains("required");
    Answer wrongType = api.post(path, Map.of("clientRequestId", 7, "tasks", List.of()));
    assertThat(wrongType.body().path("field").asText()).isEqualTo("clientRequestId");
    Answer cycle =
        api.post(
            path,
            Map.of(
                "clientRequestId",
                "r-cycle",
                "tasks",
                List.of(task("a", List.of("b"), List.of()), task("b", List.of("a"), List.of()))));
    assertThat(cycle.status()).isEqualTo(400);
    assertThat(cycle.body().path("field").asText()).isEqualTo("tasks");
    assertThat(cycle.error()).contains("cycle: a -> b -> a");
    Answer empty = api.post(path, Map.of("clientRequestId", "r-empty", "tasks", List.of()));
    assertThat(empty.status()).isEqualTo(400);
    assertThat(empty.error()).contains("graph is empty");
    Answer badProject =
        api.post("/api/projects", Map.of("projectId", "bad id", "tenantId", "t", "name", "n"));
    assertThat(badProject.body().path("field").asText()).isEqualTo("projectId");
    assertThat(core.lifecycle().changes().changes("p-bad", null, 10)).isEmpty();
  }

  @Test
  void anOversizedBodyIs413WithOrWithoutALength() throws Exception {
    provision("p-big");
    String big =
        "{\"clientRequestId\": \"r\", \"title\": \"" + "x".repeat(1 << 20) + "\", \"tasks\": []}";
    Answer sized = api.post("/api/projects/p-big/changes", big);
    assertThat(sized.status()).isEqualTo(413);
    assertThat(sized.error()).contains("larger than 1048576 bytes");
    HttpRequest.BodyPublisher unsized = unsizedBody(big);
    Answer chunked =
        api.send(
            HttpRequest.newBuilder(
                    URI.create(
                        "http://127.0.0.1:" + core.httpPort() + "/api/projects/p-big/changes"))
                .header("Content-Type", "application/json")
                .POST(unsized));
    assertThat(chunked.status()).isEqualTo(413);
    assertThat(chunked.error()).contains("larger than");
    assertThat(core.lifecycle().changes().changes("p-big", null, 10)).isEmpty();
  }

  /** A body without Content-Length (chunked). */
  private static HttpRequest.BodyPublisher unsizedBody(String text) {
    HttpRequest.BodyPublisher sized = HttpRequest.BodyPublishers.ofString(text);
    return new HttpRequest.BodyPublisher() {
      @Override
      public long contentLength() {
        return -1;
      }

      @Override
      public void subscribe(Flow.Subscriber<? super java.nio.ByteBuffer> subscriber) {
        sized.subscribe(subscriber);
      }
    };
  }

  @Test
  void unknownIdsAndRoutesAre404() throws Exception {
    assertThat(api.get("/api/projects/p-none").status()).isEqualTo(404);
    assertThat(api.get("/api/projects/p-none").error()).isEqualTo("unknown project p-none");
    assertThat(api.get("/api/projects/p-none/view").status()).isEqualTo(404);
    assertThat(api.get("/api/projects/p-none/events").status()).isEqualTo(404);
    assertThat(api.get("/api/projects/p-none/changes").status()).isEqualTo(404);
    assertThat(api.post("/api/projects/p-none/archive", "").status()).isEqualTo(404);
    assertThat(api.delete("/api/projects/p-none").status()).isEqualTo(404);
    assertThat(api.post("/api/projects/p-none/app", "").status()).isEqualTo(404);
    Answer create =
        api.post(
            "/api/projects/p-none/changes",
            Map.of("clientRequestId", "r", "tasks", List.of(task("a", List.of(), List.of()))));
    assertThat(create.status()).isEqualTo(404);
    assertThat(api.get("/api/changes/chg_none").status()).isEqualTo(404);
    assertThat(api.post("/api/changes/chg_none/approve", "").status()).isEqualTo(404);
    assertThat(api.post("/api/changes/chg_none/decline", "").status()).isEqualTo(404);
    assertThat(api.post("/api/changes/chg_none/cancel", "").status()).isEqualTo(404);
    assertThat(api.get("/api/dead-letters/999999").status()).isEqualTo(404);
    assertThat(api.post("/api/dead-letters/999999/retry", "").status()).isEqualTo(404);
    assertThat(api.post("/api/dead-letters/abc/dismiss", "").status()).isEqualTo(404);
    Answer task = api.post("/api/agents/a1/tasks/none/running", Map.of("attempt", 1));
    assertThat(task.status()).isEqualTo(404);
    assertThat(task.error()).isEqualTo("unknown task none");
    Answer route = api.get("/api/nothing-here");
    assertThat(route.status()).isEqualTo(404);
    assertThat(route.error()).isEqualTo("no route GET /api/nothing-here");
  }

  @Test
  void aReportFromAnAgentThatDoesNotHoldTheTaskIs409AndWritesNothing() throws Exception {
    provision("p-held");
    String changeId = createChange("p-held", "req-h", 2);
    awaitChangeState(changeId, "awaiting_approval");
    Lifecycle lifecycle = core.lifecycle();
    List<TaskInfo> before = lifecycle.changes().tasks(changeId);
    TaskInfo done = before.get(0);
    long rows = outboxRows("p-held");
    String base = "/api/agents/agt_rogue/tasks/" + done.taskId() + "/";
    Map<String, Object> attempt = Map.of("attempt", done.attempt());
    Map<String, Object> withKey = Map.of("attempt", done.attempt(), "key", "path:src/x");
    List<Answer> answers =
        List.of(
            api.post(base + "running", attempt),
            api.post(base + "intents", withKey),
            api.post(base + "claims", withKey),
            api.post(base + "claims/release", withKey),
            api.post(base + "changeset", attempt),
            api.post(base + "completed", attempt),
            api.post(base + "failed", Map.of("attempt", done.attempt(), "error", "no")));
    for (Answer a : answers) {
      assertThat(a.status()).as(a.text()).isEqualTo(409);
      assertThat(a.error()).contains("agent agt_rogue does not hold task " + done.taskId());
    }
    // The holder's own attempt is over too: its late failure is refused as well.
    Answer holderLate =
        api.post(
            "/api/agents/" + done.agentId() + "/tasks/" + done.taskId() + "/failed",
            Map.of("attempt", done.attempt(), "error", "late"));
    assertThat(holderLate.status()).isEqualTo(409);
    assertThat(lifecycle.changes().tasks(changeId)).isEqualTo(before);
    assertThat(outboxRows("p-held")).isEqualTo(rows);
    Answer missingAttempt = api.post(base + "running", Map.of());
    assertThat(missingAttempt.status()).isEqualTo(400);
    assertThat(missingAttempt.body().path("field").asText()).isEqualTo("attempt");
  }

  @Test
  void deadLettersAreListedGroupedRetriedAndDismissed() throws Exception {
    // An agent.wake of an unknown Task is rejected: a dead letter at once.
    ObjectNode payload =
        ApiClient.JSON.createObjectNode().put("agentId", "agt_x").put("attempt", 1);
    core.queues()
        .commands()
        .send(
            Command.builder()
                .commandId("cmd_api_dead_1")
                .commandType(CommandType.AGENT_WAKE)
                .projectId("p-dead")
                .changeId("chg_none")
                .taskId("chg_none:t1")
                .createdAt(Instant.now())
                .payload(payload)
                .build())
        .get();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                api.get("/api/dead-letters?projectId=p-dead").body().path("deadLetters").size()
                    == 1);
    JsonNode row = api.get("/api/dead-letters?projectId=p-dead").body().path("deadLetters").get(0);
    assertThat(row.path("commandId").asText()).isEqualTo("cmd_api_dead_1");
    assertThat(row.path("commandType").asText()).isEqualTo("agent.wake");
    assertThat(row.path("originQueue").asText()).isEqualTo("agent-wakeups");
    assertThat(row.path("status").asText()).isEqualTo("open");
    assertThat(row.path("command").path("commandId").asText()).isEqualTo("cmd_api_dead_1");
    assertThat(
            api.get("/api/dead-letters?projectId=p-dead&queue=integration")
                .body()
                .path("deadLetters"))
        .isEmpty();
    assertThat(
            api.get("/api/dead-letters?projectId=p-dead&commandType=agent.wake&state=open")
                .body()
                .path("deadLetters"))
        .hasSize(1);
    assertThat(api.get("/api/dead-letters?state=maybe").body().path("field").asText())
        .isEqualTo("state");
    long id = row.path("id").asLong();
    String reason = row.path("reason").asText();
    JsonNode groups = api.get("/api/dead-letters/groups").body().path("groups");
    assertThat(groups)
        .anySatisfy(
            g -> {
              assertThat(g.path("commandType").asText()).isEqualTo("agent.wake");
              assertThat(g.path("reason").asText()).isEqualTo(reason);
              assertThat(g.path("count").asLong()).isEqualTo(1);
            });

    Answer retried = api.post("/api/dead-letters/" + id + "/retry", Map.of("operator", "ops-1"));
    assertThat(retried.status()).as(retried.text()).isEqualTo(202);
    assertThat(retried.body().path("messageId").asText())
        .isEqualTo("agent-wakeups:cmd_api_dead_1:a2");
    assertThat(retried.body().path("deadLetter").path("retriedBy").asText()).isEqualTo("ops-1");
    assertThat(retried.body().path("deadLetter").path("retriedAttempt").asInt()).isEqualTo(2);
    // The retried wake fails again and reopens the row at attempt 2; a dismiss before that
    // would be undone by it.
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              JsonNode d = api.get("/api/dead-letters/" + id).body();
              return d.path("attempt").asInt() == 2 && d.path("status").asText().equals("open");
            });
    Answer dismissed = api.post("/api/dead-letters/" + id + "/dismiss", "");
    assertThat(dismissed.status()).isEqualTo(200);
    assertThat(dismissed.body().path("deadLetter").path("resolution").asText())
        .isEqualTo("dismissed");
    assertThat(dismissed.body().path("deadLetter").path("resolvedBy").asText()).isEqualTo("api");
    Answer twice = api.post("/api/dead-letters/" + id + "/dismiss", "");
    assertThat(twice.status()).isEqualTo(409);
    assertThat(twice.error()).contains("closed already");
    assertThat(
            api.get("/api/dead-letters?projectId=p-dead&state=closed").body().path("deadLetters"))
        .hasSize(1);
  }

  @Test
  void aPoisonEventBatchCanOnlyBeDismissedAloneOrAsAGroup() throws Exception {
    String reason = "projector failed 5 times: boom " + System.nanoTime();
    List<Long> ids = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      String commandId = "batch:test:" + reason.hashCode() + ":" + i;
      core.database()
          .inTransaction(
              tx ->
                  tx.update(
                      "INSERT INTO dead_letters (command_id, kind, command, reason, delivery_count,"
                          + " project_id, created_at_ms) VALUES (?, 'event_batch', '{}', ?, 5, ?, ?)",
                      commandId,
                      reason,
                      "p-poison",
                      System.currentTimeMillis()));
    }
    api.get("/api/dead-letters?kind=event_batch&projectId=p-poison")
        .body()
        .path("deadLetters")
        .forEach(d -> ids.add(d.path("id").asLong()));
    assertThat(ids).hasSize(2);
    Answer one = api.post("/api/dead-letters/" + ids.get(0) + "/retry", "");
    assertThat(one.status()).isEqualTo(409);
    assertThat(one.error()).contains("can only be dismissed");
    Map<String, Object> group = new java.util.HashMap<>();
    group.put("commandType", null);
    group.put("reason", reason);
    Answer groupRetry = api.post("/api/dead-letters/groups/retry", group);
    assertThat(groupRetry.status()).isEqualTo(409);
    assertThat(groupRetry.error()).contains("can only be dismissed");
    Answer groupDismiss = api.post("/api/dead-letters/groups/dismiss", group);
    assertThat(groupDismiss.status()).as(groupDismiss.text()).isEqualTo(200);
    List<Long> dismissed = new ArrayList<>();
    groupDismiss.body().path("dismissed").forEach(n -> dismissed.add(n.asLong()));
    assertThat(dismissed).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(api.post("/api/dead-letters/groups/dismiss", group).status()).isEqualTo(404);
    Answer noReason = api.post("/api/dead-letters/groups/dismiss", Map.of("commandType", "x"));
    assertThat(noReason.body().path("field").asText()).isEqualTo("reason");
  }

  @Test
  void failedOutboxRowsAreListed() throws Exception {
    long now = System.currentTimeMillis();
    core.database()
        .inTransaction(
            tx ->
                tx.update(
                    "INSERT INTO outbox (actor_class, actor_id, project_id, event_id, event_type,"
                        + " stream_index, subject, payload, state, attempts, next_attempt_at_ms,"
                        + " last_error, created_at_ms) VALUES ('test', 'a1', 'p-outbox',"
                        + " 'evt_0123456789abcdef0123456789abcdef', 'change.created', 3,"
                        + " 'events.03', ?, 'failed', 10, ?, 'no ack', ?)",
                    "{}".getBytes(StandardCharsets.UTF_8),
                    now,
                    now));
    JsonNode rows = api.get("/api/outbox/failed").body().path("rows");
    assertThat(rows)
        .anySatisfy(
            r -> {
              assertThat(r.path("eventId").asText())
                  .isEqualTo("evt_0123456789abcdef0123456789abcdef");
              assertThat(r.path("stream").asText()).isEqualTo("EVENTS_03");
              assertThat(r.path("attempts").asInt()).isEqualTo(10);
              assertThat(r.path("lastError").asText()).isEqualTo("no ack");
            });
  }

  @Test
  void streamsShowTheirConsumersAndCoreIsAliveAndReady() throws Exception {
    provision("p-streams");
    JsonNode streams = api.get("/api/streams").body().path("streams");
    assertThat(streams).hasSize(9);
    Set<String> names = new HashSet<>();
    streams.forEach(s -> names.add(s.path("name").asText()));
    assertThat(names).contains("EVENTS_00", "EVENTS_07", "COMMANDS");
    JsonNode commands = streams.get(8);
    assertThat(commands.path("name").asText()).isEqualTo("COMMANDS");
    assertThat(commands.path("lastSequence").asLong()).isPositive();
    assertThat(commands.path("consumers"))
        .anySatisfy(
            c -> {
              assertThat(c.path("name").asText()).isEqualTo("q-integration");
              assertThat(c.has("pending")).isTrue();
              assertThat(c.has("ackFloor")).isTrue();
              assertThat(c.has("redelivered")).isTrue();
              assertThat(c.path("lag").asLong()).isGreaterThanOrEqualTo(0);
            });
    assertThat(api.get("/healthz").body().path("status").asText()).isEqualTo("ok");
    Answer ready = api.get("/readyz");
    assertThat(ready.status()).isEqualTo(200);
    assertThat(ready.body().path("database").asText()).isEqualTo("ok");
    assertThat(ready.body().path("nats").asText()).isEqualTo("connected");
  }

  @Test
  void onSqliteTheOneCoreHoldsEveryDutyAtEpochZero() throws Exception {
    Answer cluster = api.get("/api/cluster");
    assertThat(cluster.status()).isEqualTo(200);
    String node = cluster.body().path("nodeId").asText();
    assertThat(node).startsWith("node-");
    assertThat(cluster.body().path("nodes")).hasSize(1);
    assertThat(cluster.body().path("nodes").get(0).path("state").asText()).isEqualTo("live");
    List<String> duties = new ArrayList<>();
    for (JsonNode d : cluster.body().path("duties")) {
      duties.add(d.path("duty").asText());
      assertThat(d.path("owner").asText()).isEqualTo(node);
      assertThat(d.path("epoch").asLong()).isZero();
    }
    assertThat(duties)
        .containsExactly(
            "stream-00",
            "stream-01",
            "stream-02",
            "stream-03",
            "stream-04",
            "stream-05",
            "stream-06",
            "stream-07",
            "sweep");
  }

  @Test
  void theOpenApiFileNamesEveryRouteAndNoOther() throws Exception {
    JsonNode openapi = api.get("/openapi.json").body();
    assertThat(openapi.path("openapi").asText()).startsWith("3.");
    Set<String> documented = new HashSet<>();
    for (Iterator<Map.Entry<String, JsonNode>> paths = openapi.path("paths").fields();
        paths.hasNext(); ) {
      Map.Entry<String, JsonNode> path = paths.next();
      path.getValue()
          .fieldNames()
          .forEachRemaining(
              method -> {
                if (Set.of("get", "post", "put", "patch", "delete").contains(method)) {
                  documented.add(method.toUpperCase() + " " + path.getKey());
                }
              });
    }
    assertThat(documented).containsExactlyInAnyOrderElementsOf(new HashSet<>(core.httpRoutes()));
  }

  @Test
  void anUnknownTraceIdIs404() throws Exception {
    Answer event = api.get("/api/trace/evt_00000000000000000000000000000000");
    assertThat(event.status()).isEqualTo(404);
    assertThat(event.error()).contains("evt_00000000000000000000000000000000");
    assertThat(api.get("/api/trace/cmd_nobody_knows").status()).isEqualTo(404);
  }

  @Test
  void aChangesEventsFormOneTreeFromChangeCreated() throws Exception {
    provision("p-trace");
    String changeId = createChange("p-trace", "req-trace", 2);
    awaitChangeState(changeId, "awaiting_approval");
    JsonNode events = api.get("/api/projects/p-trace/events?limit=1000").body().path("events");
    String created = null;
    String completed = null;
    for (JsonNode e : events) {
      if (e.path("eventType").asText().equals("change.created")) {
        created = e.path("eventId").asText();
      }
      if (e.path("eventType").asText().equals("task.completed") && completed == null) {
        completed = e.path("eventId").asText();
      }
    }
    assertThat(created).isNotNull();
    Answer trace = api.get("/api/trace/" + completed);
    assertThat(trace.status()).as(trace.text()).isEqualTo(200);
    JsonNode root = trace.body().path("root");
    assertThat(root.path("id").asText()).isEqualTo(completed);
    assertThat(root.path("kind").asText()).isEqualTo("event");
    assertThat(root.path("asked").asBoolean()).isTrue();
    // task.completed -> change.dispatch -> agent.wake (ready) -> agent.woken: three levels.
    JsonNode dispatch = child(root, "change.dispatch");
    assertThat(dispatch.path("kind").asText()).isEqualTo("command");
    assertThat(dispatch.path("causedBy").asText()).isEqualTo(completed);
    JsonNode wake = child(dispatch, "agent.wake");
    assertThat(wake.path("id").asText()).endsWith("_ready");
    JsonNode woken = child(wake, "agent.woken");
    assertThat(woken.path("causedBy").asText()).isEqualTo(wake.path("id").asText());
    // From a node deep in the tree the answer is the same tree, with that node asked.
    Answer fromWake = api.get("/api/trace/" + wake.path("id").asText());
    assertThat(fromWake.status()).isEqualTo(200);
    assertThat(fromWake.body().path("root").path("id").asText()).isEqualTo(completed);
  }

  static JsonNode child(JsonNode node, String type) {
    List<String> types = new ArrayList<>();
    for (JsonNode c : node.path("children")) {
      if (c.path("type").asText().equals(type)) {
        return c;
      }
      types.add(c.path("type").asText());
    }
    throw new AssertionError("no child " + type + " under " + node.path("id") + ": " + types);
  }
}
