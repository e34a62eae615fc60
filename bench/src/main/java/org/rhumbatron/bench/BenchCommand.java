package org.rhumbatron.bench;

import static org.rhumbatron.bench.BenchOptions.require;

import java.time.Duration;
import java.util.concurrent.Callable;
import org.rhumbatron.bench.BenchOptions.Common;
import org.rhumbatron.bench.BenchOptions.Latency;
import org.rhumbatron.bench.BenchOptions.OwnServer;
import org.rhumbatron.bench.BenchOptions.Rounds;
import org.rhumbatron.bench.BenchOptions.ScopesConverter;
import org.rhumbatron.bench.BenchOptions.Warmup;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.workload.LifecycleWorkload;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code rhumbatron bench}: load benchmarks that print one JSON object, most with a {@code ratio}
 * to a raw figure of the same run.
 */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description =
        "Load benchmarks; each prints one JSON object (outbox, router and commands with a"
            + " top-level ratio).",
    subcommands = {
      BenchCommand.Outbox.class,
      BenchCommand.Router.class,
      BenchCommand.Commands.class,
      BenchCommand.Lifecycle.class,
      BenchCommand.Soak.class,
      BenchCommand.Webhook.class
    })
public final class BenchCommand implements Runnable {

  @Override
  public void run() {
    new picocli.CommandLine(this).usage(System.out);
  }

  @Command(
      name = "outbox",
      mixinStandardHelpOptions = true,
      description =
          "State changes (one transaction, one Event) committed and published per second, beside"
              + " raw JetStream async publish in the same run, and commit-to-PubAck latency.")
  static final class Outbox implements Callable<Integer> {
    @Mixin Common common = new Common();

    @Option(names = "--count", defaultValue = "20000", description = "State changes per phase.")
    int count;

    @Option(names = "--actors", defaultValue = "64", description = "Writing actors (shards).")
    int actors;

    @Mixin Latency latency = new Latency();
    @Mixin Rounds rounds = new Rounds();
    @Mixin Warmup warmup = new Warmup();

    @Option(
        names = "--acks",
        defaultValue = "nats",
        description =
            "nats (default), or in-process: every send acknowledged at once without NATS, to"
                + " measure the outbox path alone (a diagnostic: its ratio is not the outbox's figure).")
    String acks;

    @Override
    public Integer call() throws Exception {
      int measured = rounds.checked(this);
      Duration warm = warmup.checked(this);
      require(
          this,
          acks.equals("nats") || acks.equals("in-process"),
          "--acks must be nats or in-process, was " + acks);
      return common.run(
          "outbox",
          (url, db) ->
              new OutboxBench(
                      url,
                      db,
                      count,
                      actors,
                      latency.latencySeconds,
                      measured,
                      warm,
                      acks.equals("in-process"))
                  .run());
    }
  }

  @Command(
      name = "router",
      mixinStandardHelpOptions = true,
      description =
          "Events per second from the stream to the applied projection on one stream and on 8,"
              + " beside raw fetch + ack of a bare pull consumer in the same run, and"
              + " publish-to-applied latency on the nudge path. Purges the 8 event streams and"
              + " deletes their router consumers, before and after; on a --nats server whose"
              + " event streams hold messages or consumers, only with --purge.")
  static final class Router implements Callable<Integer> {
    @Mixin Common common = new Common();

    @Option(names = "--count", defaultValue = "20000", description = "Events per phase.")
    int count;

    @Option(names = "--projects", defaultValue = "8", description = "Projects per stream.")
    int projects;

    @Mixin Latency latency = new Latency();
    @Mixin Rounds rounds = new Rounds();

    @Option(
        names = "--purge",
        description =
            "Allow purging the event streams of the --nats server when they hold messages or"
                + " consumers (a private nats-server is always the bench's own).")
    boolean purge;

    @Override
    public Integer call() throws Exception {
      int measured = rounds.checked(this);
      boolean purgeAllowed = purge || common.ownServer();
      return common.run(
          "router",
          (url, db) ->
              new RouterBench(
                      url, db, count, projects, latency.latencySeconds, measured, purgeAllowed)
                  .run());
    }
  }

  @Command(
      name = "commands",
      mixinStandardHelpOptions = true,
      description =
          "Commands per second through a no-op queue handler for one queue and for all queues,"
              + " beside raw fetch+ack of a bare pull consumer in the same run.")
  static final class Commands implements Callable<Integer> {
    @Mixin Common common = new Common();

    @Option(names = "--count", defaultValue = "20000", description = "Commands per phase.")
    int count;

    @Override
    public Integer call() throws Exception {
      return common.run("commands", (url, db) -> new CommandsBench(url, count).run());
    }
  }

  @Command(
      name = "lifecycle",
      mixinStandardHelpOptions = true,
      description =
          "Changes of 20 Tasks from createChange through verifying to completed through a core"
              + " of its own with simulated Agents, verifier and release of zero delay and"
              + " auto-approval: Changes and Tasks per second to verifying, the time from a Task's"
              + " completion to the wake of the Task it made ready, Changes per second to"
              + " completed and their latencies, stale Candidates, and the outbox and router"
              + " figures of the same rounds. On a --nats server, only while its COMMANDS and"
              + " event streams hold no messages or consumers (no core).")
  static final class Lifecycle implements Callable<Integer> {
    @Mixin Common common = new Common();

    @Option(names = "--changes", defaultValue = "20", description = "Changes per round.")
    int changes;

    @Option(names = "--projects", defaultValue = "4", description = "Projects per round.")
    int projects;

    @Mixin Rounds rounds = new Rounds();

    @Option(
        names = "--scopes",
        defaultValue = "disjoint",
        converter = ScopesConverter.class,
        description =
            "disjoint: each Change in folders of its own (the wake path's figures); shared: the"
                + " Changes of a Project work in the same four folders, so their Candidates wait"
                + " for the conflict review.")
    LifecycleWorkload.Scopes scopes;

    @Mixin Warmup warmup = new Warmup();

    @Option(
        names = "--nodes",
        defaultValue = "1",
        description =
            "Core nodes in this process on the one --db (PostgreSQL when more than 1) and NATS"
                + " server, each with its own data directory under --data; the Changes go to"
                + " their lifecycles round-robin.")
    int nodes;

    @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      int measured = rounds.checked(this);
      require(this, changes >= 1, "--changes must be at least 1, was " + changes);
      require(this, nodes >= 1, "--nodes must be at least 1, was " + nodes);
      if (nodes > 1 && (common.db == null || Database.sqliteFile(common.db).isPresent())) {
        // Through this command's own CommandLine, so that the message goes to Main's err.
        throw new picocli.CommandLine.ParameterException(
            spec.commandLine(),
            BenchNodes.sqliteRefusal(
                nodes, common.db == null ? "the default (a file in --data)" : common.db));
      }
      require(this, projects >= 1, "--projects must be at least 1, was " + projects);
      Duration warm = warmup.checked(this);
      boolean ownServer = common.ownServer();
      return common.run(
          "lifecycle",
          (url, db) ->
              new LifecycleBench(
                      url,
                      common.data,
                      db,
                      changes,
                      projects,
                      measured,
                      warm,
                      ownServer,
                      scopes,
                      nodes)
                  .run());
    }
  }

  @Command(
      name = "soak",
      mixinStandardHelpOptions = true,
      description =
          "Events at a constant rate through a core of its own with every retention shortened to"
              + " --keep-seconds and the purges every minute; samples the database size and the"
              + " purged tables, and reports the bytes each Event leaves and the size after the"
              + " horizon. Runs its own nats-server: it shortens the event streams' max age.")
  static final class Soak implements Callable<Integer> {
    // No --nats: the bench shortens the event streams' max age, which a shared server must keep.
    @Mixin OwnServer common = new OwnServer();

    @Option(names = "--rate", defaultValue = "200", description = "Events per second.")
    int rate;

    @Option(names = "--projects", defaultValue = "16", description = "Projects written to.")
    int projects;

    @Option(
        names = "--keep-seconds",
        defaultValue = "90",
        description = "Every retention horizon (and the streams' max age), in seconds.")
    int keepSeconds;

    @Option(names = "--seconds", defaultValue = "300", description = "Length of the run.")
    int seconds;

    @Option(names = "--sample-seconds", defaultValue = "10", description = "Sample interval.")
    int sampleSeconds;

    @Override
    public Integer call() throws Exception {
      require(this, rate >= 1, "--rate must be at least 1, was " + rate);
      require(this, projects >= 1, "--projects must be at least 1, was " + projects);
      require(this, keepSeconds >= 2, "--keep-seconds must be at least 2, was " + keepSeconds);
      require(
          this, sampleSeconds >= 1, "--sample-seconds must be at least 1, was " + sampleSeconds);
      require(
          this,
          seconds > keepSeconds + 90,
          "--seconds must exceed --keep-seconds + 90 (one purge past the horizon), was " + seconds);
      return common.run(
          "soak",
          (url, db) ->
              new SoakBench(
                      url,
                      common.data,
                      db,
                      rate,
                      projects,
                      Duration.ofSeconds(keepSeconds),
                      Duration.ofSeconds(seconds),
                      Duration.ofSeconds(sampleSeconds))
                  .run());
    }
  }

  @Command(
      name = "webhook",
      mixinStandardHelpOptions = true,
      description =
          "The wake path to Agents outside core, through a core of its own with the webhook"
              + " runtime and a local HTTP server as the Agents: rounds that wake --agents at once,"
              + " --slow of them answering after --slow-answer-ms, report task.ready to the webhook"
              + " call of the others and of the slow ones; then one Task at a time (light load)."
              + " On a --nats server, only while its COMMANDS and event streams hold no messages"
              + " or consumers (no core).")
  static final class Webhook implements Callable<Integer> {
    @Mixin Common common = new Common();

    @Option(
        names = "--agents",
        defaultValue = "20",
        description = "Agents woken at once per round (a multiple of 5).")
    int agents;

    @Option(
        names = "--slow",
        defaultValue = "2",
        description = "Of them, Agents that answer their webhook after --slow-answer-ms.")
    int slow;

    @Option(
        names = "--slow-answer-ms",
        defaultValue = "8000",
        description = "How long a slow Agent takes to answer (the webhook timeout is 10 s).")
    long slowAnswerMs;

    @Option(names = "--rounds", defaultValue = "3", description = "Rounds of --agents wakes.")
    int rounds;

    @Option(
        names = "--light-wakes",
        defaultValue = "30",
        description = "Tasks made ready one at a time for the light-load figure.")
    int lightWakes;

    @Override
    public Integer call() throws Exception {
      require(this, rounds >= 1, "--rounds must be at least 1, was " + rounds);
      require(
          this,
          agents >= 5 && agents % 5 == 0,
          "--agents must be a positive multiple of 5, was " + agents);
      require(
          this,
          slow >= 0 && slow <= agents / 5,
          "--slow must be between 0 and --agents / 5, was " + slow);
      require(
          this,
          slowAnswerMs >= 0 && slowAnswerMs < 10_000,
          "--slow-answer-ms must be in 0..9999 (inside the webhook timeout), was " + slowAnswerMs);
      require(this, lightWakes >= 1, "--light-wakes must be at least 1, was " + lightWakes);
      boolean ownServer = common.ownServer();
      return common.run(
          "webhook",
          (url, db) ->
              new WebhookBench(
                      url,
                      common.data,
                      db,
                      agents,
                      slow,
                      Duration.ofMillis(slowAnswerMs),
                      rounds,
                      lightWakes,
                      ownServer)
                  .run());
    }
  }
}
