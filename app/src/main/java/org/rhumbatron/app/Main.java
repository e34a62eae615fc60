package org.rhumbatron.app;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code bin/rhumbatron}: the service and its tools as picocli subcommands. */
@Command(
    name = "rhumbatron",
    mixinStandardHelpOptions = true,
    version = "rhumbatron 0.1.0",
    description = "Events and commands backbone of Rhumbatron.",
    subcommands = {CoreCommand.class, DemoCommand.class, BenchCommand.class})
public final class Main implements Runnable {

  public static void main(String[] args) {
    // Logback's servlet initializer would stop logging when Jetty shuts down, racing core's own
    // shutdown hook, whose last lines ("core stopped") would then be lost.
    System.setProperty("logbackDisableServletContainerInitializer", "true");
    int code = run(args);
    if (code != 0) {
      System.exit(code);
    }
  }

  /** Runs a command line and returns its exit code (tests call this). */
  public static int run(String... args) {
    CommandLine cli = new CommandLine(new Main());
    cli.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          // Expected failures (bad settings, missing nats-server) are one line, not a stack trace.
          commandLine.getErr().println("rhumbatron: " + e.getMessage());
          return 2;
        });
    return cli.execute(args);
  }

  @Override
  public void run() {
    new CommandLine(this).usage(System.out);
  }
}
