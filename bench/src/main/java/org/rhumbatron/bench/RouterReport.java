package org.rhumbatron.bench;

import static org.rhumbatron.bench.BenchRounds.each;
import static org.rhumbatron.bench.BenchRounds.median;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.workload.LatencyStats;

/** The router bench's JSON: its rates as medians of the rounds, CPU, latency and overlap. */
record RouterReport(String natsUrl, int count, int projectsPerStream) {
  private static final ObjectMapper JSON = new ObjectMapper();

  ObjectNode json(
      Database db,
      int payloadBytes,
      Map<String, List<RouterPhase>> measured,
      long[] latencies,
      long[] idleLatencies,
      ObjectNode overlapOut) {
    List<Double> raws = each(measured.get("raw_fetch_ack"), RouterPhase::perSecond);
    List<Double> rawTwos = each(measured.get("raw_two_subscriptions"), RouterPhase::perSecond);
    List<Double> ones = each(measured.get("router_one_stream"), RouterPhase::perSecond);
    List<Double> eights = each(measured.get("router_eight_streams"), RouterPhase::perSecond);
    double raw = BenchRounds.median(raws);
    double rawTwo = BenchRounds.median(rawTwos);
    double oneStream = BenchRounds.median(ones);
    double eightStreams = BenchRounds.median(eights);
    ObjectNode out = JSON.createObjectNode();
    out.put("bench", "router");
    out.put("database", db.dialect().name());
    out.put("nats", natsUrl);
    out.put("events", count);
    out.put("projects_per_stream", projectsPerStream);
    out.put("payload_bytes", payloadBytes);
    out.put("raw_fetch_ack_per_s", Math.round(raw));
    out.put("raw_two_subscriptions_per_s", Math.round(rawTwo));
    out.put("router_one_stream_per_s", Math.round(oneStream));
    out.put("router_eight_streams_per_s", Math.round(eightStreams));
    out.put("ratio", BenchRounds.ratio(oneStream, raw));
    out.put("ratio_eight_streams", BenchRounds.ratio(eightStreams, raw));
    // The ceiling of `ratio` that fetch and ack alone leave, before any claim or projection.
    out.put("ratio_raw_two_subscriptions", BenchRounds.ratio(rawTwo, raw));
    BenchRounds.put(out, "router_one_stream_per_s", ones);
    BenchRounds.put(out, "router_eight_streams_per_s", eights);
    BenchRounds.put(out, "raw_per_s", raws);
    BenchRounds.put(out, "raw_two_subscriptions_per_s", rawTwos);
    // What each event costs in CPU (this JVM and its private nats-server), the medians of the
    // rounds; and how many cores the phase kept busy: near `cores`, it is bound by CPU, not by
    // waiting.
    ObjectNode cpu = out.putObject("cpu_us_per_event");
    cpu.put("includes_nats_server", CpuTime.countsChildren());
    ObjectNode serverCpu = cpu.putObject("of_which_nats_server");
    ObjectNode busy = out.putObject("cores_busy");
    measured.forEach(
        (phase, rounds) -> {
          cpu.put(phase, median(each(rounds, p -> p.cpuMicrosPerEvent(count)), 1));
          serverCpu.put(phase, median(each(rounds, p -> p.serverCpuMicrosPerEvent(count)), 1));
          busy.put(phase, median(each(rounds, RouterPhase::coresBusy), 2));
        });
    out.put("cores", Runtime.getRuntime().availableProcessors());
    ObjectNode latency = out.putObject("publish_to_applied_ms");
    latency.put("offered_per_s", Math.round(Math.max(50, oneStream / 2)));
    LatencyStats.put(latency, latencies, 50, 99);
    ObjectNode idle = out.putObject("publish_to_applied_idle_ms");
    idle.put("offered_per_s", Math.round(RouterBench.IDLE_RATE));
    LatencyStats.put(idle, idleLatencies, 50, 99);
    out.set("resource_overlap", overlapOut);
    return out;
  }
}
