package org.rhumbatron.app;

import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.util.Map;
import org.rhumbatron.bench.BenchCommand;
import org.rhumbatron.cli.Cli;
import org.rhumbatron.cli.CliException;
import org.rhumbatron.server.CoreCommand;
import org.rhumbatron.workload.DemoCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code bin/rhumbatron}: the service and its tools as picocli subcommands. */
@Command(
    name = "rhumbatron",
    mixinStandardHelpOptions = true,
    version = "rhumbatron 0.1.0",
    description = "Events and commands backbone of Rhumbatron.",
    subcommands = {
      CoreCommand.class,
      DemoCommand.class,
      BenchCommand.class,
      org.rhumbatron.checker.CheckCommand.class
    })
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
    return run(
        System.getenv(),
        new PrintWriter(System.out, true, Charset.defaultCharset()),
        new PrintWriter(System.err, true, Charset.defaultCharset()),
        args);
  }

  /** Runs a command line with the given environment and streams; returns its exit code. */
  public static int run(Map<String, String> env, PrintWriter out, PrintWriter err, String... args) {
    CommandLine cli = new CommandLine(new Main());
    Cli.addTo(cli, env);
    withHelpEverywhere(cli, cli.getCommandSpec().version());
    cli.setOut(out);
    cli.setErr(err);
    cli.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          // Expected failures (bad settings, missing nats-server, the API's refusals) are one
          // line, not a stack trace.
          commandLine.getErr().println("rhumbatron: " + e.getMessage());
          commandLine.getErr().flush();
          return e instanceof CliException c ? c.exitCode() : 2;
        });
    cli.setParameterExceptionHandler(
        (e, args2) -> {
          // One line as every other error; --help gives the usage.
          e.getCommandLine().getErr().println("rhumbatron: " + UsageErrors.oneLine(e));
          e.getCommandLine().getErr().flush();
          return CliException.USAGE;
        });
    return cli.execute(args);
  }

  /**
   * {@code -V} on every command down to the leaves, and {@code --help} where the annotation forgot
   * it. A method subcommand must say {@code mixinStandardHelpOptions} itself: a mixin added later
   * would shift its parameters.
   */
  static void withHelpEverywhere(CommandLine command, String[] version) {
    CommandLine.Model.CommandSpec spec = command.getCommandSpec();
    if (!(spec.userObject() instanceof java.lang.reflect.Method)) {
      spec.mixinStandardHelpOptions(true);
    }
    spec.version(version);
    command.getSubcommands().values().stream()
        .distinct()
        .forEach(sub -> withHelpEverywhere(sub, version));
  }

  @Override
  public void run() {
    new CommandLine(this).usage(System.out);
  }
}
