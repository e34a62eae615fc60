package org.rhumbatron.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.platform.queue.JetStreamCommandTransport;
import org.rhumbatron.protocol.DeadLetterMessage;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.server.CoreService;
import org.rhumbatron.server.TestCores;
import org.rhumbatron.server.TestDeadLetters;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;
import picocli.CommandLine;

/**
 * The CLI's commands against a running core (real nats-server, SQLite): dead letters listed,
 * grouped, retried and dismissed one by one and by group, and the reads beside them.
 */
class CliAgainstCoreTest {
  static final String TOKEN = "cli-token-1";
  static final Duration WAIT = Duration.ofSeconds(30);
  static final ObjectMapper JSON = new ObjectMapper();

  @RegisterExtension static final NatsServerExtension nats = new NatsServerExtension();
  @RegisterExtension static final DatabaseExtension db = DatabaseExtension.sqlite();
  @TempDir static Path data;

  static CoreService core;
  static Map<String, String> env;
  static Commands commands;
  static final AtomicLong originSequences = new AtomicLong(1_000);

  record Run(int code, String out, String err) {
    JsonNode json() throws Exception {
      return JSON.readTree(out);
    }
  }

  /** The command line's root as the launcher names it; the CLI adds its subcommands to it. */
  @CommandLine.Command(name = "rhumbatron")
  static final class Root {}

  @BeforeAll
  static void startCore() throws Exception {
    core = TestCores.withToken(nats.url(), data, db.database().url(), TOKEN);
    env =
        Map.of(
            "RHUMBATRON_URL", "http://127.0.0.1:" + core.httpPort(), "RHUMBATRON_API_TOKEN", TOKEN);
    commands = new Commands(new JetStreamCommandTransport(core.nats()), new EnvelopeCodec());
  }

  @AfterAll
  static void stopCore() {
    if (core != null) {
      core.close();
    }
  }

  static Run cli(String... args) {
    CommandLine root = new CommandLine(new Root());
    Cli.addTo(root, env);
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    root.setOut(new PrintWriter(out));
    root.setErr(new PrintWriter(err));
    int code = root.execute(args);
    return new Run(code, out.toString(), err.toString());
  }

  static Run ok(String... args) {
    Run r = cli(args);
    assertThat(r.code()).as(String.join(" ", args) + ": " + r.err()).isZero();
    return r;
  }

  @Test
  void oneDeadLetterIsRetriedAndItsCommandRunsAgain() throws Exception {
    long id = deadLetterOfProvision("cli-dl-retry", "provisioner down " + System.nanoTime());
    Run retried = ok("dead-letters", "retry", Long.toString(id), "--operator", "ops-1", "--json");
    assertThat(retried.json().path("messageId").asText())
        .startsWith("integration:cmd_provision_cli-dl-retry");
    assertThat(retried.json().path("deadLetter").path("retriedBy").asText()).isEqualTo("ops-1");
    await().atMost(WAIT).until(() -> cli("projects", "show", "cli-dl-retry").code() == 0);
    assertThat(ok("projects", "show", "cli-dl-retry").out())
        .startsWith("PROJECTID")
        .contains("cli-dl-retry", "active");
  }

  @Test
  void oneDeadLetterIsDismissedOnceAndItsCommandDoesNotRun() throws Exception {
    long id = deadLetterOfProvision("cli-dl-dismiss", "provisioner down " + System.nanoTime());
    Run dismissed = ok("dead-letters", "dismiss", Long.toString(id), "--operator", "ops-1");
    assertThat(dismissed.out()).startsWith("ID").contains(Long.toString(id), "closed");
    JsonNode row = ok("dead-letters", "list", "--state", "closed", "--json").json();
    assertThat(row.path("deadLetters").findValuesAsText("id")).contains(Long.toString(id));
    Run twice = cli("dead-letters", "dismiss", Long.toString(id));
    assertThat(twice.code()).isNotZero();
    assertThat(twice.err()).contains("409");
    assertThat(cli("projects", "show", "cli-dl-dismiss").code()).isNotZero();
  }

  @Test
  void aGroupIsCountedThenRetriedAsOne() throws Exception {
    String reason = "provisioner down " + System.nanoTime();
    List<Long> ids =
        List.of(
            deadLetterOfProvision("cli-g-r1", reason), deadLetterOfProvision("cli-g-r2", reason));
    JsonNode group = group(reason);
    assertThat(group.path("count").asInt()).isEqualTo(2);
    assertThat(group.path("commandType").asText()).isEqualTo("project.provision");
    assertThat(ok("dead-letters", "groups").out()).startsWith("COUNT").contains(reason);

    Run retried =
        ok(
            "dead-letters",
            "retry-group",
            "--command-type",
            "project.provision",
            "--reason",
            reason,
            "--json");
    assertThat(longs(retried.json().path("retried"))).containsExactlyInAnyOrderElementsOf(ids);
    for (String project : List.of("cli-g-r1", "cli-g-r2")) {
      await().atMost(WAIT).until(() -> cli("projects", "show", project).code() == 0);
    }
    assertThat(group(reason)).isNull();
  }

  @Test
  void aGroupIsDismissedAsOne() throws Exception {
    String reason = "provisioner gone " + System.nanoTime();
    List<Long> ids =
        List.of(
            deadLetterOfProvision("cli-g-d1", reason), deadLetterOfProvision("cli-g-d2", reason));
    Run dismissed =
        ok(
            "dead-letters",
            "dismiss-group",
            "--command-type",
            "project.provision",
            "--reason",
            reason,
            "--json");
    assertThat(longs(dismissed.json().path("dismissed"))).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(group(reason)).isNull();
    Run again =
        cli(
            "dead-letters",
            "dismiss-group",
            "--command-type",
            "project.provision",
            "--reason",
            reason);
    assertThat(again.code()).isNotZero();
    assertThat(again.err()).contains("404");
  }

  @Test
  void streamsAndProjectsPrintTablesAndJson() throws Exception {
    JsonNode streams = ok("streams", "--json").json().path("streams");
    assertThat(streams.size()).isGreaterThan(1);
    assertThat(ok("streams").out())
        .startsWith("NAME")
        .contains(streams.get(0).path("name").asText());
    ok("projects", "provision", "cli-p1", "--tenant", "t1", "--name", "P one");
    await().atMost(WAIT).until(() -> cli("projects", "show", "cli-p1").code() == 0);
    JsonNode listed = ok("projects", "list", "--status", "active", "--json").json();
    assertThat(listed.path("projects").findValuesAsText("projectId")).contains("cli-p1");
  }

  /** The open group of {@code reason} as {@code dead-letters groups --json} lists it, or null. */
  private static JsonNode group(String reason) throws Exception {
    for (JsonNode g : ok("dead-letters", "groups", "--json").json().path("groups")) {
      if (g.path("reason").asText().equals(reason)) {
        return g;
      }
    }
    return null;
  }

  private static List<Long> longs(JsonNode array) {
    List<Long> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asLong()));
    return out;
  }

  /**
   * A dead letter of {@code projectId}'s {@code project.provision}, as the integration consumer
   * leaves one after its last delivery; answers its id once the CLI lists it.
   */
  private static long deadLetterOfProvision(String projectId, String reason) throws Exception {
    DeadLetterMessage dl =
        TestDeadLetters.of(TestDeadLetters.provision(projectId, projectId), reason);
    commands.sendDeadLetter(dl, originSequences.incrementAndGet()).get();
    String[] list = {"dead-letters", "list", "--project", projectId, "--json"};
    await().atMost(WAIT).until(() -> ok(list).json().path("deadLetters").size() == 1);
    return ok(list).json().path("deadLetters").get(0).path("id").asLong();
  }
}
