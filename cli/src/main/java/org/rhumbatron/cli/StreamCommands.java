package org.rhumbatron.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code rhumbatron streams}: the JetStream streams and their message counts. */
@Command(name = "streams", mixinStandardHelpOptions = true, description = "JetStream streams.")
final class StreamCommands implements Runnable {
  private final Cli cli;
  @Mixin Cli.Target target;

  StreamCommands(Cli cli) {
    this.cli = cli;
  }

  @Override
  public void run() {
    cli.print(
        target,
        cli.client(target).get("/api/streams"),
        "streams",
        "name",
        "messages",
        "firstSequence",
        "lastSequence",
        "error");
  }
}
