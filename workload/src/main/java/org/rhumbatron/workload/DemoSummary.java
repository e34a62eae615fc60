package org.rhumbatron.workload;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.StreamState;
import java.io.IOException;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.rhumbatron.agents.WakeConsumer;
import org.rhumbatron.coordinator.project.ProjectRootActor;
import org.rhumbatron.lifecycle.RunReads;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.Queue;

/**
 * What a demo run did, read from the database and the streams once core is quiet: Changes by end
 * state, Events (outbox rows), Commands (messages the COMMANDS stream stored), dead letters, wakes:
 * those that reached an Agent ({@code agent.woken}) and the stale ones ({@code false_wakeup} points
 * by their reason, and repeats: {@code repeat_wakeup} points), and publish-to-applied latency: an
 * outbox row's commit ({@code created_at_ms}) to the projector's claim ({@code
 * processed_events.processed_at_ms}).
 */
record DemoSummary(
    Run run,
    Map<ChangeState, Long> changesByState,
    long events,
    long commands,
    long deadLetters,
    long wakesReached,
    Map<String, Long> staleWakes,
    long[] publishToAppliedMillis) {

  /** The reason label of a repeat in {@link #staleWakes}. */
  static final String REPEAT = "repeat";

  static final String OPERATOR = "operator: Lifecycle.approveChange";
  static final String AUTO_APPROVE = "changes.auto-approve";
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * With {@code --cores N}: the cores, and the failover of the one killed half way (null: none).
   */
  record Cluster(int cores, FailoverWatch.Result failover) {}

  /** The run's own figures, beside what the database holds. */
  record Run(
      int requested,
      int created,
      String approval,
      Approvals approvals,
      long wallMillis,
      boolean quiet,
      String dashboard,
      Path dataDir,
      Cluster cluster) {}

  /** The operator's approvals by their outcome. */
  static final class Approvals {
    private final Map<ProjectRootActor.Promotion, Long> byOutcome =
        new EnumMap<>(ProjectRootActor.Promotion.class);

    void count(ProjectRootActor.Promotion outcome) {
      byOutcome.merge(outcome, 1L, Long::sum);
    }

    Map<String, Long> asMap() {
      Map<String, Long> out = new LinkedHashMap<>();
      for (ProjectRootActor.Promotion p : ProjectRootActor.Promotion.values()) {
        out.put(p.name().toLowerCase(), byOutcome.getOrDefault(p, 0L));
      }
      return out;
    }
  }

  /** The last sequences of COMMANDS and of the event streams, and what COMMANDS still holds. */
  record Streams(long commandsLastSeq, long eventsLastSeq, long commandsHeld) {
    static Streams read(JetStreamManagement jsm) throws IOException, JetStreamApiException {
      StreamState commands = jsm.getStreamInfo(Queue.STREAM_NAME).getStreamState();
      long events = 0;
      for (int s = 0; s < EventStreams.STREAM_COUNT; s++) {
        events += jsm.getStreamInfo(EventStreams.streamName(s)).getStreamState().getLastSequence();
      }
      return new Streams(commands.getLastSequence(), events, commands.getMsgCount());
    }

    long commandsSince(Streams before) {
      return commandsLastSeq - before.commandsLastSeq;
    }
  }

  static DemoSummary read(Database db, JetStreamManagement jsm, Streams before, Run run)
      throws IOException, JetStreamApiException {
    Map<ChangeState, Long> byState = new RunReads(db).changesByState();
    long[] counts =
        db.read(
            tx ->
                new long[] {
                  tx.queryLong("SELECT COUNT(*) FROM outbox"),
                  tx.queryLong("SELECT COUNT(*) FROM dead_letters"),
                  tx.queryLong(
                      "SELECT COUNT(*) FROM outbox WHERE event_type = ?",
                      EventType.AGENT_WOKEN.wireName())
                });
    Map<String, Long> stale = new java.util.TreeMap<>();
    db.read(
        tx ->
            tx.query(
                "SELECT name, labels FROM platform_metrics WHERE name IN (?, ?)",
                rs -> {
                  String reason =
                      WakeConsumer.FALSE_WAKEUP.equals(rs.getString(1))
                          ? reasonOf(rs.getString(2))
                          : REPEAT;
                  return stale.merge(reason, 1L, Long::sum);
                },
                WakeConsumer.FALSE_WAKEUP,
                WakeConsumer.REPEAT_WAKEUP));
    List<Long> latencies =
        db.read(
            tx ->
                tx.query(
                    "SELECT p.processed_at_ms - o.created_at_ms FROM outbox o"
                        + " JOIN processed_events p ON p.event_id = o.event_id"
                        + " WHERE p.consumer = ?",
                    rs -> rs.getLong(1),
                    Subscription.PROJECT_VIEW_PROJECTOR.durableName()));
    long[] samples = latencies.stream().mapToLong(Long::longValue).toArray();
    return new DemoSummary(
        run,
        byState,
        counts[0],
        Streams.read(jsm).commandsSince(before),
        counts[1],
        counts[2],
        stale,
        samples);
  }

  private static String reasonOf(String labels) {
    try {
      return JSON.readTree(labels == null ? "{}" : labels).path("reason").asText("unknown");
    } catch (IOException e) {
      return "unknown";
    }
  }

  long staleWakeCount() {
    return staleWakes.values().stream().mapToLong(Long::longValue).sum();
  }

  /** Every wake the wake consumer ended: the ones that reached an Agent and the stale ones. */
  long wakes() {
    return wakesReached + staleWakeCount();
  }

  long ended() {
    return changesByState.entrySet().stream()
        .filter(e -> e.getKey().ended())
        .mapToLong(Map.Entry::getValue)
        .sum();
  }

  double changesPerSecond() {
    return Math.round(ended() / Math.max(0.001, run.wallMillis() / 1000.0) * 100) / 100.0;
  }

  long percentile(int p) {
    return LatencyStats.percentile(publishToAppliedMillis, p);
  }

  /** Whether every Change created ended (none is open). */
  boolean everyChangeEnded() {
    return changesByState.entrySet().stream()
            .filter(e -> !e.getKey().ended())
            .mapToLong(Map.Entry::getValue)
            .sum()
        == 0;
  }

  String toJson() {
    ObjectNode out = JSON.createObjectNode();
    ObjectNode changes = out.putObject("changes");
    changes.put("requested", run.requested());
    changes.put("created", run.created());
    ObjectNode states = changes.putObject("by_state");
    changesByState.forEach((state, n) -> states.put(state.dbName(), n));
    out.put("approval", run.approval());
    ObjectNode approvals = out.putObject("approvals");
    run.approvals().asMap().forEach(approvals::put);
    out.put("events", events);
    out.put("commands", commands);
    out.put("dead_letters", deadLetters);
    ObjectNode wakes = out.putObject("wakes");
    wakes.put("total", wakes());
    wakes.put("reached_agent", wakesReached);
    wakes.put("stale", staleWakeCount());
    ObjectNode byReason = wakes.putObject("stale_by_reason");
    staleWakes.forEach(byReason::put);
    ObjectNode latency = out.putObject("publish_to_applied_ms");
    latency.put("samples", publishToAppliedMillis.length);
    latency.put("p50", percentile(50));
    latency.put("p99", percentile(99));
    latency.put("max", percentile(100));
    out.put("wall_s", run.wallMillis() / 1000.0);
    out.put("changes_per_s", changesPerSecond());
    out.put("quiet", run.quiet());
    Cluster cluster = run.cluster();
    if (cluster != null) {
      ObjectNode c = out.putObject("cores");
      c.put("count", cluster.cores());
      c.put("every_change_ended", everyChangeEnded());
      FailoverWatch.Result f = cluster.failover();
      if (f != null) {
        c.put("killed_node", f.killedNode());
        c.put("killed_held_duties", f.dutiesHeld());
        c.put("duties_moved_ms", f.dutiesMovedMillis() < 0 ? null : f.dutiesMovedMillis());
        c.put(
            "in_flight_handled_ms",
            f.inFlightHandledMillis() < 0 ? null : f.inFlightHandledMillis());
        c.put("in_flight_handled_means", FailoverWatch.IN_FLIGHT_MEANS);
        c.put("failover_watched_ms", f.watchedMillis());
        c.put("failover_cut_short_by_the_run_end", f.cutShort());
        f.waiting().forEach(c.putArray("failover_waiting")::add);
      }
    }
    out.put("dashboard", run.dashboard());
    out.put("data", run.dataDir().toString());
    try {
      return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(out);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  String toText() {
    StringBuilder b = new StringBuilder();
    b.append("\nrhumbatron demo summary\n");
    line(
        b,
        "Changes",
        run.created()
            + " created of "
            + run.requested()
            + ": "
            + changesByState.entrySet().stream()
                .map(e -> e.getValue() + " " + e.getKey().dbName())
                .collect(Collectors.joining(", ")));
    line(
        b,
        "approval",
        run.approval()
            + " ("
            + run.approvals().asMap().entrySet().stream()
                .map(e -> e.getValue() + " " + e.getKey())
                .collect(Collectors.joining(", "))
            + ")");
    line(b, "Events", Long.toString(events));
    line(b, "Commands", Long.toString(commands));
    line(b, "dead letters", Long.toString(deadLetters));
    b.append(
        "  wakes "
            + wakes()
            + ": "
            + wakesReached
            + " reached an Agent, "
            + staleWakeCount()
            + " stale"
            + (staleWakes.isEmpty()
                ? ""
                : staleWakes.entrySet().stream()
                    .map(e -> e.getValue() + " " + e.getKey())
                    .collect(Collectors.joining(", ", " (", ")")))
            + "\n");
    line(
        b,
        "publish-to-applied",
        "p50 " + percentile(50) + " ms, p99 " + percentile(99) + " ms (" + events + " Events)");
    line(
        b,
        "wall time",
        String.format("%.1f s, %.2f Changes/s", run.wallMillis() / 1000.0, changesPerSecond()));
    if (!run.quiet()) {
      line(b, "note", "core was still busy when the counts were read");
    }
    if (run.cluster() != null) {
      clusterLines(b, run.cluster());
    }
    line(b, "dashboard", run.dashboard() != null ? run.dashboard() : DemoCommand.DASHBOARD_GONE);
    line(b, "data", run.dataDir().toString());
    return b.toString();
  }

  private void clusterLines(StringBuilder b, Cluster cluster) {
    FailoverWatch.Result f = cluster.failover();
    line(
        b,
        "cores",
        cluster.cores()
            + (f == null
                ? " (none killed: the run ended before half its Changes did)"
                : "; "
                    + f.killedNode()
                    + " SIGKILLed half way, holding "
                    + f.dutiesHeld()
                    + " duties"));
    if (f != null) {
      line(
          b,
          "duties moved",
          afterKill(f, f.dutiesMovedMillis()) + ": every duty held by a live node");
      line(
          b,
          "in-flight handled",
          afterKill(f, f.inFlightHandledMillis()) + ": " + FailoverWatch.IN_FLIGHT_MEANS);
      if (!f.waiting().isEmpty()) {
        line(b, "still waiting", String.join("; ", f.waiting()));
      }
    }
    line(b, "every Change ended", everyChangeEnded() ? "yes" : "NO");
  }

  private static String afterKill(FailoverWatch.Result f, long millis) {
    if (millis >= 0) {
      return String.format("%.1f s after the kill", millis / 1000.0);
    }
    return String.format(
        f.cutShort()
            ? "NOT by the run's end, %.1f s after the kill"
            : "NOT within %.1f s of the kill (the failover allowance)",
        f.watchedMillis() / 1000.0);
  }

  private static void line(StringBuilder b, String name, String value) {
    b.append(String.format("  %-19s %s%n", name, value));
  }
}
