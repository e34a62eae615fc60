package org.rhumbatron.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code rhumbatron changes list|show|create|approve|decline|cancel}. */
@Command(
    name = "changes",
    mixinStandardHelpOptions = true,
    description = "Read and decide Changes.")
final class ChangeCommands {
  private static final String[] COLUMNS = {
    "changeId", "projectId", "clientRequestId", "state", "title", "reason"
  };
  private final Cli cli;

  ChangeCommands(Cli cli) {
    this.cli = cli;
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "list",
      description = "The Changes of a Project.")
  void list(
      @Mixin Cli.Target t,
      @Option(names = "--project", required = true) String project,
      @Option(names = "--state") String state) {
    String query = state == null ? "" : "?state=" + state;
    cli.print(
        t, cli.client(t).get("/api/projects/" + project + "/changes" + query), "changes", COLUMNS);
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "show",
      description = "One Change and its Tasks.")
  void show(@Mixin Cli.Target t, @Parameters(paramLabel = "ID") String id) {
    CoreClient.Answer a = cli.client(t).get("/api/changes/" + id);
    cli.print(t, a, null, COLUMNS);
    if (!t.json) {
      cli.print(
          t, a, "tasks", "taskId", "key", "state", "title", "dependsOn", "agentId", "attempt");
    }
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "create",
      description = "Create a Change (idempotent on --request-id).")
  void create(
      @Mixin Cli.Target t,
      @Option(names = "--project", required = true) String project,
      @Option(names = "--request-id", required = true) String requestId,
      @Option(names = "--title") String title,
      @Option(
              names = "--tasks-file",
              required = true,
              description =
                  "JSON array of Tasks: key, title, dependsOn, resourceScopes (the API's tasks).")
          Path tasksFile) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("clientRequestId", requestId);
    if (title != null) {
      body.put("title", title);
    }
    body.put("tasks", tasks(tasksFile));
    cli.print(t, cli.client(t).post("/api/projects/" + project + "/changes", body), null, COLUMNS);
  }

  private static JsonNode tasks(Path file) {
    String text = Cli.readFile("--tasks-file", file);
    try {
      JsonNode tasks = CoreClient.JSON.readTree(text);
      if (tasks == null || !tasks.isArray()) {
        throw new CliException(CliException.USAGE, "--tasks-file " + file + ": not a JSON array");
      }
      return tasks;
    } catch (IOException e) {
      throw new CliException(
          CliException.USAGE,
          "--tasks-file " + file + ": not JSON: " + e.getMessage().lines().findFirst().orElse(""));
    }
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "approve",
      description =
          "Approve a Change awaiting approval. PROMOTION: promoted, already_promoted (a repeat) or"
              + " stale_base (the project moved on: the Change verifies again on the new base).")
  void approve(@Mixin Cli.Target t, @Parameters(paramLabel = "ID") String id) {
    cli.print(
        t,
        cli.client(t).post("/api/changes/" + id + "/approve", Map.of()),
        null,
        "change.changeId",
        "promotion",
        "generation",
        "releaseId",
        "change.state");
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "decline",
      description = "Decline a Change awaiting approval.")
  void decline(@Mixin Cli.Target t, @Parameters(paramLabel = "ID") String id) {
    decide(t, id, "decline");
  }

  @Command(mixinStandardHelpOptions = true, name = "cancel", description = "Cancel a Change.")
  void cancel(@Mixin Cli.Target t, @Parameters(paramLabel = "ID") String id) {
    decide(t, id, "cancel");
  }

  private void decide(Cli.Target t, String id, String verb) {
    cli.print(
        t,
        cli.client(t).post("/api/changes/" + id + "/" + verb, Map.of()),
        null,
        "change.changeId",
        "change.state",
        "changed",
        "change.reason");
  }
}
