package org.rhumbatron.checker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.HdrHistogram.Histogram;
import org.rhumbatron.workload.LatencyStats;

/**
 * How long the other cores took to hold every duty a killed or paused core held: from the signal to
 * the first {@code GET /api/cluster} of a running core that names no duty of the lost one. Read as
 * an operator would, so the figure includes one poll of {@link #POLL}.
 */
final class Takeovers {
  static final Duration POLL = Duration.ofMillis(100);
  static final Duration ANSWER_WITHIN = Duration.ofSeconds(60);
  static final String NOT_TAKEN_OVER = "duties_not_taken_over";

  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final Clock clock;
  private final List<Long> killed = new ArrayList<>();
  private final List<Long> paused = new ArrayList<>();
  private final List<String> missed = new ArrayList<>();
  private InFlightWork inFlight;
  private int stalls;
  private final List<String> falseTakeovers = new ArrayList<>();
  static final String FALSE_TAKEOVER = "duty_moved_after_short_stall";

  Takeovers(Clock clock) {
    this.clock = clock;
  }

  /**
   * Waits up to {@link #ANSWER_WITHIN} for the core at {@code apiUrl} to answer (one still starting
   * holds no duty yet, and its kill would time nothing); false when it does not.
   */
  boolean answers(String apiUrl) throws InterruptedException {
    long deadline = clock.millis() + ANSWER_WITHIN.toMillis();
    while (cluster(apiUrl) == null) {
      if (clock.millis() > deadline) {
        return false;
      }
      Thread.sleep(POLL.toMillis());
    }
    return true;
  }

  /**
   * Waits, from {@code sinceMillis} and at most {@code within}, until a core of {@code live}
   * answers with no duty owned by {@code nodeId}; records the time, or a miss.
   */
  void await(
      String nodeId, boolean pause, long sinceMillis, Duration within, Supplier<List<String>> live)
      throws InterruptedException {
    long deadline = sinceMillis + within.toMillis();
    while (clock.millis() < deadline) {
      for (String url : live.get()) {
        JsonNode cluster = cluster(url);
        if (cluster != null
            && !nodeId.equals(cluster.path("nodeId").asText())
            && none(cluster, nodeId)) {
          (pause ? paused : killed).add(clock.millis() - sinceMillis);
          return;
        }
      }
      Thread.sleep(POLL.toMillis());
    }
    missed.add(
        nodeId + " still held duties " + within + " after its " + (pause ? "pause" : "kill"));
  }

  private static boolean none(JsonNode cluster, String nodeId) {
    for (JsonNode duty : cluster.path("duties")) {
      if (nodeId.equals(duty.path("owner").asText())) {
        return false;
      }
    }
    return true;
  }

  private JsonNode cluster(String apiUrl) {
    try {
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(URI.create(apiUrl + "/api/cluster"))
                  .timeout(Duration.ofSeconds(2))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return r.statusCode() == 200 ? JSON.readTree(r.body()) : null;
    } catch (Exception down) {
      if (down instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      return null;
    }
  }

  /**
   * The duties {@code nodeId} holds with their epochs, as the first core of {@code live} other than
   * it answers (empty when none answers).
   */
  java.util.Map<String, Long> dutiesOf(String nodeId, Supplier<List<String>> live) {
    java.util.Map<String, Long> out = new java.util.TreeMap<>();
    for (String url : live.get()) {
      JsonNode cluster = cluster(url);
      if (cluster == null || nodeId.equals(cluster.path("nodeId").asText())) {
        continue;
      }
      for (JsonNode duty : cluster.path("duties")) {
        if (nodeId.equals(duty.path("owner").asText())) {
          out.put(duty.path("duty").asText(), duty.path("epoch").asLong());
        }
      }
      return out;
    }
    return out;
  }

  /** A burst of {@code count} short stalls of {@code nodeId}: a duty lost or re-taken is false. */
  synchronized void stalled(
      String nodeId,
      int count,
      java.util.Map<String, Long> before,
      java.util.Map<String, Long> after) {
    stalls += count;
    before.forEach(
        (duty, epoch) -> {
          if (!epoch.equals(after.get(duty))) {
            falseTakeovers.add(
                nodeId
                    + " lost "
                    + duty
                    + " (epoch "
                    + epoch
                    + ", now "
                    + (after.containsKey(duty) ? "epoch " + after.get(duty) : "elsewhere")
                    + ") in a burst of "
                    + count
                    + " stalls of "
                    + FaultPlan.STALL.toSeconds()
                    + " s");
          }
        });
  }

  /** What a killed core had in hand, timed until handled; on the check's database. */
  synchronized InFlightWork inFlight(String dbUrl) {
    if (inFlight == null) {
      inFlight = new InFlightWork(clock, dbUrl);
    }
    return inFlight;
  }

  /** The takeover times, p50 and max per fault kind, and each miss as a violation. */
  void report(CheckReport report) {
    if (inFlight != null) {
      inFlight.report(report);
    }
    if (stalls > 0) {
      report.expect(FALSE_TAKEOVER);
      report.total("node_stalls", stalls);
      report.total("false_takeovers_after_node_stall", falseTakeovers.size());
      falseTakeovers.forEach(m -> report.violation(FALSE_TAKEOVER, m));
    }
    report.expect(NOT_TAKEN_OVER);
    put(report, "takeover_after_node_kill_ms", killed);
    put(report, "takeover_after_node_pause_ms", paused);
    missed.forEach(m -> report.violation(NOT_TAKEN_OVER, m));
  }

  private static void put(CheckReport report, String name, List<Long> millis) {
    if (millis.isEmpty()) {
      return;
    }
    Histogram h = LatencyStats.histogram(millis.stream().mapToLong(Long::longValue).toArray());
    report.total(name + ".count", h.getTotalCount());
    report.total(name + ".p50", h.getValueAtPercentile(50));
    report.total(name + ".max", h.getMaxValue());
  }
}
