package org.rhumbatron.cli;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code rhumbatron dead-letters list|groups|retry|dismiss|retry-group|dismiss-group}. */
@Command(
    name = "dead-letters",
    mixinStandardHelpOptions = true,
    description = "Inspect, retry and dismiss dead letters.")
final class DeadLetterCommands {
  private static final String[] COLUMNS = {
    "id", "status", "commandType", "originQueue", "attempt", "projectId", "reason"
  };
  private final Cli cli;

  DeadLetterCommands(Cli cli) {
    this.cli = cli;
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "list",
      description = "Dead letters, open ones unless --state says otherwise.")
  void list(
      @Mixin Cli.Target t,
      @Option(names = "--state", description = "open, closed or all") String state,
      @Option(names = "--queue") String queue,
      @Option(names = "--command-type") String commandType,
      @Option(names = "--project") String project,
      @Option(names = "--change") String change,
      @Option(names = "--kind") String kind,
      @Option(names = "--limit") Integer limit) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("state", state);
    q.put("queue", queue);
    q.put("commandType", commandType);
    q.put("projectId", project);
    q.put("changeId", change);
    q.put("kind", kind);
    q.put("limit", limit);
    cli.print(t, cli.client(t).get("/api/dead-letters" + query(q)), "deadLetters", COLUMNS);
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "groups",
      description = "Dead letters counted by command type and reason.")
  void groups(@Mixin Cli.Target t, @Option(names = "--state") String state) {
    cli.print(
        t,
        cli.client(t)
            .get("/api/dead-letters/groups" + (state == null ? "" : query(Map.of("state", state)))),
        "groups",
        "count",
        "commandType",
        "kind",
        "reason",
        "newestAt");
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "retry",
      description = "Send a dead letter's command again.")
  void retry(
      @Mixin Cli.Target t,
      @Parameters(paramLabel = "ID") String id,
      @Option(names = "--operator") String operator) {
    cli.print(
        t,
        cli.client(t).post("/api/dead-letters/" + id + "/retry", operatorBody(operator)),
        null,
        "deadLetter.id",
        "deadLetter.status",
        "messageId",
        "deadLetter.commandType",
        "deadLetter.attempt",
        "deadLetter.reason");
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "dismiss",
      description = "Close a dead letter without sending it again.")
  void dismiss(
      @Mixin Cli.Target t,
      @Parameters(paramLabel = "ID") String id,
      @Option(names = "--operator") String operator) {
    cli.print(
        t,
        cli.client(t).post("/api/dead-letters/" + id + "/dismiss", operatorBody(operator)),
        "deadLetter",
        COLUMNS);
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "retry-group",
      description = "Retry every open row of a group.")
  void retryGroup(
      @Mixin Cli.Target t,
      @Option(names = "--command-type") String commandType,
      @Option(names = "--reason", required = true) String reason,
      @Option(names = "--operator") String operator) {
    group(t, "retry", commandType, reason, operator);
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "dismiss-group",
      description = "Dismiss every open row of a group.")
  void dismissGroup(
      @Mixin Cli.Target t,
      @Option(names = "--command-type") String commandType,
      @Option(names = "--reason", required = true) String reason,
      @Option(names = "--operator") String operator) {
    group(t, "dismiss", commandType, reason, operator);
  }

  private void group(
      Cli.Target t, String verb, String commandType, String reason, String operator) {
    Map<String, Object> body = operatorBody(operator);
    body.put("commandType", commandType);
    body.put("reason", reason);
    CoreClient.Answer a = cli.client(t).post("/api/dead-letters/groups/" + verb, body);
    cli.print(t, a, null, verb.equals("retry") ? "retried" : "dismissed", "refused");
  }

  private static Map<String, Object> operatorBody(String operator) {
    Map<String, Object> body = new LinkedHashMap<>();
    if (operator != null) {
      body.put("operator", operator);
    }
    return body;
  }

  /** The query string of the non-null values, encoded. */
  static String query(Map<String, Object> params) {
    StringBuilder q = new StringBuilder();
    params.forEach(
        (k, v) -> {
          if (v != null) {
            q.append(q.length() == 0 ? '?' : '&')
                .append(k)
                .append('=')
                .append(URLEncoder.encode(String.valueOf(v), StandardCharsets.UTF_8));
          }
        });
    return q.toString();
  }
}
