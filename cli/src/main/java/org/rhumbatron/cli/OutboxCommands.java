package org.rhumbatron.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code rhumbatron outbox failed|backlog}. */
@Command(name = "outbox", mixinStandardHelpOptions = true, description = "The outbox's rows.")
final class OutboxCommands {
  private final Cli cli;

  OutboxCommands(Cli cli) {
    this.cli = cli;
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "failed",
      description = "Outbox rows that failed for good.")
  void failed(@Mixin Cli.Target t) {
    cli.print(
        t,
        cli.client(t).get("/api/outbox/failed"),
        "rows",
        "seq",
        "eventType",
        "projectId",
        "stream",
        "attempts",
        "lastError");
  }

  @Command(
      mixinStandardHelpOptions = true,
      name = "backlog",
      description = "Rows waiting to be published, per stream.")
  void backlog(@Mixin Cli.Target t) {
    cli.print(
        t,
        cli.client(t).get("/api/outbox/backlog"),
        "streams",
        "stream",
        "pending",
        "retryWait",
        "failed",
        "backlog",
        "oldestWaitingAt");
  }
}
