package org.rhumbatron.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.server.CoreService;
import org.rhumbatron.server.TestCores;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * The CLI against a running core (real nats-server, SQLite): each subcommand's table and JSON, and
 * the exit code and one stderr line of each kind of failure.
 */
class CliTest {
  static final String TOKEN = "cli-token-1";
  static final ObjectMapper JSON = new ObjectMapper();

  @RegisterExtension static final NatsServerExtension nats = new NatsServerExtension();
  @RegisterExtension static final DatabaseExtension db = DatabaseExtension.sqlite();
  @TempDir static Path data;

  static CoreService core;
  static Map<String, String> env;

  record Run(int code, String out, String err) {
    JsonNode json() throws Exception {
      return JSON.readTree(out);
    }
  }

  @BeforeAll
  static void startCore() throws Exception {
    core = TestCores.withToken(nats.url(), data, db.database().url(), TOKEN);
    env =
        Map.of(
            "RHUMBATRON_URL", "http://127.0.0.1:" + core.httpPort(), "RHUMBATRON_API_TOKEN", TOKEN);
  }

  @AfterAll
  static void stopCore() {
    if (core != null) {
      core.close();
    }
  }

  static Run cli(Map<String, String> env, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Main.run(env, new PrintWriter(out), new PrintWriter(err), args);
    return new Run(code, out.toString(), err.toString());
  }

  static Run cli(String... args) {
    return cli(env, args);
  }

  static void provision(String id) {
    Run r = cli("projects", "provision", id, "--tenant", "t1", "--name", "P " + id);
    assertThat(r.code()).as(r.err()).isZero();
    await().atMost(Duration.ofSeconds(30)).until(() -> cli("projects", "show", id).code() == 0);
  }

  @Test
  void projectsAreProvisionedShownArchivedAndDeleted() throws Exception {
    provision("cli-p1");
    Run table = cli("projects", "show", "cli-p1");
    assertThat(table.out()).startsWith("PROJECTID").contains("cli-p1", "active");
    Run json = cli("projects", "show", "cli-p1", "--json");
    assertThat(json.json().path("name").asText()).isEqualTo("P cli-p1");
    Run archived = cli("projects", "archive", "cli-p1", "--json");
    assertThat(archived.code()).as(archived.err()).isZero();
    assertThat(archived.json().path("changed").asBoolean()).isTrue();
    Run deleted = cli("projects", "delete", "cli-p1");
    assertThat(deleted.code()).as(deleted.err()).isZero();
    assertThat(deleted.out()).contains("cli-p1");
    Run listed = cli("projects", "list", "--status", "deleted");
    assertThat(listed.out()).startsWith("PROJECTID").contains("cli-p1", "deleted");
    Run listedJson = cli("projects", "list", "--status", "active", "--limit", "5", "--json");
    assertThat(listedJson.code()).as(listedJson.err()).isZero();
    listedJson
        .json()
        .path("projects")
        .forEach(p -> assertThat(p.path("projectId").asText()).isNotEqualTo("cli-p1"));
    Run badStatus = cli("projects", "list", "--status", "gone");
    assertThat(badStatus.code()).isEqualTo(1);
    assertThat(badStatus.err()).contains("status");
  }

  @Test
  void changesAreCreatedListedShownAndCancelled() throws Exception {
    provision("cli-p2");
    Path tasks = data.resolve("tasks.json");
    Files.writeString(
        tasks,
        "[{\"key\":\"a\",\"title\":\"A\",\"dependsOn\":[],\"resourceScopes\":[\"path:src/a\"]}]");
    Run created =
        cli(
            "changes",
            "create",
            "--project",
            "cli-p2",
            "--request-id",
            "r1",
            "--title",
            "One",
            "--tasks-file",
            tasks.toString(),
            "--json");
    assertThat(created.code()).as(created.err()).isZero();
    String changeId = created.json().path("changeId").asText();
    assertThat(changeId).isNotEmpty();
    Run list = cli("changes", "list", "--project", "cli-p2");
    assertThat(list.out()).startsWith("CHANGEID").contains(changeId, "One");
    Run listJson = cli("changes", "list", "--project", "cli-p2", "--json");
    assertThat(listJson.json().path("changes").get(0).path("changeId").asText())
        .isEqualTo(changeId);
    Run show = cli("changes", "show", changeId);
    assertThat(show.out()).contains(changeId, "TASKID", changeId + ":a");
    Run cancelled = cli("changes", "cancel", changeId, "--json");
    assertThat(cancelled.code()).as(cancelled.err()).isIn(0, 1);
    Run badFile =
        cli(
            "changes",
            "create",
            "--project",
            "cli-p2",
            "--request-id",
            "r2",
            "--tasks-file",
            data.resolve("none.json").toString());
    assertThat(badFile.code()).isEqualTo(2);
    assertThat(badFile.err().lines()).hasSize(1);
  }

  @Test
  void tablesShowWhatTheApiAnswers() throws Exception {
    Run sent = cli("projects", "provision", "cli-p4", "--tenant", "t1", "--name", "P4");
    assertThat(sent.code()).as(sent.err()).isZero();
    List<String> header = List.of(sent.out().lines().findFirst().orElseThrow().split("\\s+"));
    assertThat(header).contains("COMMANDID", "QUEUE", "DUPLICATE").doesNotContain("MESSAGEID");
    String row = sent.out().lines().skip(1).findFirst().orElseThrow();
    assertThat(row.split("\\s+")[header.indexOf("COMMANDID")]).isNotEqualTo("-");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> cli("projects", "show", "cli-p4").code() == 0);

    Path tasks = data.resolve("tasks-p4.json");
    Files.writeString(tasks, "[{\"key\":\"a\",\"title\":\"A\"}]");
    Run created =
        cli(
            "changes",
            "create",
            "--project",
            "cli-p4",
            "--request-id",
            "r4",
            "--tasks-file",
            tasks.toString(),
            "--json");
    assertThat(created.code()).as(created.err()).isZero();
    String changeId = created.json().path("changeId").asText();
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                cli("changes", "show", changeId, "--json")
                    .json()
                    .path("state")
                    .asText()
                    .equals("awaiting_approval"));
    Run approved = cli("changes", "approve", changeId);
    assertThat(approved.code()).as(approved.err()).isZero();
    assertThat(approved.out()).startsWith("CHANGEID").contains("PROMOTION", "GENERATION");
    assertThat(approved.out().lines().skip(1).findFirst().orElseThrow())
        .contains(changeId, "promoted", "completed");
    Run again = cli("changes", "approve", changeId);
    assertThat(again.code()).as(again.err()).isZero();
    assertThat(again.out()).contains("already_promoted");
  }

  @Test
  void operatorReadsPrintTablesAndJson() throws Exception {
    Run dead = cli("dead-letters", "list", "--state", "all");
    assertThat(dead.code()).as(dead.err()).isZero();
    assertThat(dead.out()).startsWith("ID");
    assertThat(cli("dead-letters", "list", "--json").json().has("deadLetters")).isTrue();
    assertThat(cli("dead-letters", "groups").out()).startsWith("COUNT");
    assertThat(cli("dead-letters", "groups", "--json").json().has("groups")).isTrue();
    assertThat(cli("outbox", "failed").out()).startsWith("SEQ");
    assertThat(cli("outbox", "failed", "--json").json().has("rows")).isTrue();
    Run streams = cli("streams");
    assertThat(streams.code()).as(streams.err()).isZero();
    JsonNode streamsJson = cli("streams", "--json").json().path("streams");
    assertThat(streamsJson.size()).isGreaterThan(1);
    assertThat(streams.out()).startsWith("NAME").contains(streamsJson.get(0).path("name").asText());
  }

  @Test
  void anUnknownIdIsExitOneWithTheApisMessage() {
    Run r = cli("changes", "show", "chg_nope");
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.err().lines()).hasSize(1);
    assertThat(r.err()).contains("404", "unknown change chg_nope");
    Run dl = cli("dead-letters", "retry", "999999");
    assertThat(dl.code()).isEqualTo(1);
    assertThat(dl.err().lines()).hasSize(1);
  }

  @Test
  void aWriteWithoutTokenIsRefused() throws Exception {
    Map<String, String> noToken = Map.of("RHUMBATRON_URL", env.get("RHUMBATRON_URL"));
    Run r = cli(noToken, "projects", "provision", "cli-p3", "--tenant", "t", "--name", "n");
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.err().lines()).hasSize(1);
    assertThat(r.err()).contains("401");
    Path file = data.resolve("token");
    Files.writeString(file, TOKEN + "\n");
    Run withFile =
        cli(
            noToken,
            "projects",
            "provision",
            "cli-p3",
            "--tenant",
            "t",
            "--name",
            "n",
            "--token-file",
            file.toString());
    assertThat(withFile.code()).as(withFile.err()).isZero();
    Run missingFile =
        cli(noToken, "projects", "archive", "cli-p3", "--token-file", data.resolve("x").toString());
    assertThat(missingFile.code()).isEqualTo(2);
  }

  @Test
  void anUnreachableCoreIsExitThreeNamingTheUrl() throws Exception {
    int port;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Run r = cli("streams", "--url", "http://127.0.0.1:" + port);
    assertThat(r.code()).isEqualTo(3);
    assertThat(r.err().lines()).hasSize(1);
    assertThat(r.err()).contains("http://127.0.0.1:" + port);
  }

  @Test
  void badUsageIsExitTwoInOneLine() {
    Run r = cli("changes", "list");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err().lines()).hasSize(1);
    assertThat(r.err()).contains("--project");
    assertThat(cli("projects", "frobnicate").code()).isEqualTo(2);
  }

  @Test
  void aReaderTokenIsCreatedShownOnceListedAndRevoked() throws Exception {
    Run created = cli("tokens", "create", "--role", "reader", "--name", "grafana");
    assertThat(created.code()).as(created.err()).isZero();
    String token = created.out().strip();
    assertThat(token).startsWith("rbt_").doesNotContain("\n");
    assertThat(created.err()).contains("shown this once");
    Map<String, String> asReader =
        Map.of("RHUMBATRON_URL", env.get("RHUMBATRON_URL"), "RHUMBATRON_API_TOKEN", token);
    assertThat(cli(asReader, "streams").code()).isZero();
    Run write = cli(asReader, "tokens", "list");
    assertThat(write.code()).isEqualTo(1);
    assertThat(write.err()).contains("HTTP 403: a reader credential may not GET /api/tokens");

    Run listed = cli("tokens", "list", "--json");
    String id = null;
    for (JsonNode t : listed.json().path("tokens")) {
      assertThat(t.has("token")).isFalse();
      if (t.path("name").asText().equals("grafana")) {
        id = t.path("id").asText();
      }
    }
    assertThat(id).isNotNull();
    assertThat(cli("tokens", "list").out()).contains(id).contains("reader").doesNotContain(token);
    assertThat(cli("tokens", "revoke", id).code()).isZero();
    Run refused = cli(asReader, "streams");
    assertThat(refused.code()).isEqualTo(1);
    assertThat(refused.err()).contains("HTTP 401: the bearer token is unknown or revoked");
    Run badRole = cli("tokens", "create", "--role", "admin", "--name", "x");
    assertThat(badRole.err()).contains("field role: one of operator, reader, agent; got 'admin'");
  }
}
