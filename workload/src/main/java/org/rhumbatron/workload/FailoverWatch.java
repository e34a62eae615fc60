package org.rhumbatron.workload;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.protocol.Queue;

/**
 * What the demo watches after it kills a core, through a live core's API: when every duty is held
 * by a live node again ({@code GET /api/cluster}), and when the dead node's in-flight work was
 * handled: every Change open at the kill made progress (a new state, Task or Event) or ended, and
 * every queue consumer acknowledged what it had delivered at the kill ({@code GET /api/streams}
 * just after the kill: its ack floor reached that delivered sequence, or nothing is ack-pending).
 * The event streams' consumers are not asked: the stream's new holder applies what the dead node
 * had delivered straight from the stream, and the server's acks of it come only with the 5-minute
 * redelivery; the Changes' progress shows the effect. Until both hold, or the failover allowance
 * passed, nothing counts as stalled.
 */
final class FailoverWatch {
  static final Duration POLL = Duration.ofMillis(500);

  /** How the summary says what "in-flight work handled" means. */
  static final String IN_FLIGHT_MEANS =
      "each Change open at the kill moved or ended, each queue consumer acked what it had"
          + " delivered by the kill";

  /** A Change as the API lists it; {@code events} -1 when not read. */
  record ChangeMark(String changeId, String state, long tasksCompleted, long events) {
    boolean ended() {
      return ChangeState.valueOf(state.toUpperCase(Locale.ROOT)).ended();
    }

    /** A new state, a Task completed, a new Event, or the end since {@code before}. */
    boolean movedSince(ChangeMark before) {
      return ended()
          || !state.equals(before.state)
          || tasksCompleted != before.tasksCompleted
          || (events >= 0 && events != before.events);
    }
  }

  /** One consumer of a stream as {@code GET /api/streams} shows it. */
  record Consumer(String stream, String name, long ackPending, long ackFloor, long delivered) {
    String key() {
      return name + " on " + stream;
    }
  }

  /**
   * The failover as watched: the core killed, how many duties it held, how long after the kill
   * every duty was held by a live node and the in-flight work was handled (-1: not within {@code
   * watchedMillis}), what was still waiting when the watch ended, and whether the run's end cut it
   * short (else the allowance did).
   */
  record Result(
      String killedNode,
      int dutiesHeld,
      long dutiesMovedMillis,
      long inFlightHandledMillis,
      long watchedMillis,
      List<String> waiting,
      boolean cutShort) {
    Result {
      waiting = List.copyOf(waiting);
    }
  }

  private final DemoApi api;
  private final List<String> projects;
  private final Clock clock;
  private final Duration allowance;
  private Map<String, ChangeMark> openAtKill = Map.of();
  private Map<String, Consumer> deliveredAtKill = Map.of();
  private String killed;
  private int dutiesHeld;
  private long killedAtMs;
  private long dutiesMovedMs = -1;
  private long handledMs = -1;
  private List<String> waiting = List.of();
  private volatile long settledAtMs = Long.MAX_VALUE;
  private volatile boolean stopped;

  FailoverWatch(DemoApi api, List<String> projects, Clock clock, Duration allowance) {
    this.api = api;
    this.projects = List.copyOf(projects);
    this.clock = clock;
    this.allowance = allowance;
  }

  /**
   * Long enough for the seed's backstops to act: the dead node's leases expire (thrice the lease,
   * as the takeover's own wait), then the longest ack wait redelivers what it held.
   */
  static Duration allowance(Settings settings) {
    Duration ackWait = settings.get(Settings.ROUTER_ACK_WAIT);
    Duration queues = settings.get(Settings.QUEUE_ACK_WAIT);
    return settings
        .get(Settings.CLUSTER_LEASE)
        .multipliedBy(3)
        .plus(ackWait.compareTo(queues) > 0 ? ackWait : queues);
  }

  /**
   * Reads, just after the kill, what the consumers have delivered (the dead node's fetches all
   * happened before), then the Changes open: what moves from here moves by the live nodes.
   */
  private void afterKill() throws IOException, InterruptedException {
    JsonNode streams = api.streams();
    Map<String, ChangeMark> open = new LinkedHashMap<>();
    for (ChangeMark m : changes()) {
      if (!m.ended()) {
        open.put(m.changeId(), withEvents(m));
      }
    }
    atKill(open, streams);
  }

  /** The Changes open and what the consumers had delivered at the kill. */
  void atKill(Map<String, ChangeMark> open, JsonNode streams) {
    openAtKill = Map.copyOf(open);
    deliveredAtKill = byKey(consumers(streams));
  }

  /** The kill happened now, to {@code node} holding {@code duties}. */
  void killed(String node, int duties) {
    killed = node;
    dutiesHeld = duties;
    killedAtMs = clock.millis();
  }

  /**
   * Polls until the duties moved and the in-flight work was handled, the allowance passed, or
   * {@link #stop}; either way the stall clock runs again from then.
   */
  Result await() throws InterruptedException {
    long deadline = killedAtMs + allowance.toMillis();
    try {
      boolean baseline = false;
      while (true) {
        try {
          // Stamped once read: the figures are when the API showed it, not when asked. The
          // cluster first: the reads of every Change take seconds under load.
          JsonNode cluster = api.cluster();
          observeDuties(clock.millis(), cluster);
          if (!baseline) {
            afterKill();
            baseline = true;
          }
          JsonNode streams = api.streams();
          Map<String, ChangeMark> now = current();
          observe(clock.millis(), cluster, streams, now);
        } catch (IOException e) {
          waiting = List.of("the API did not answer: " + e.getMessage());
        }
        if ((dutiesMovedMs >= 0 && handledMs >= 0) || clock.millis() >= deadline || stopped) {
          break;
        }
        Thread.sleep(POLL.toMillis());
      }
    } finally {
      end();
    }
    return result();
  }

  /** Ends the watch after one more look: the run is over, its summary waits for no backstop. */
  void stop() {
    stopped = true;
  }

  /** The watch ended (done, or given up): the stall clock runs again from now. */
  void end() {
    if (settledAtMs == Long.MAX_VALUE) {
      settledAtMs = clock.millis();
    }
  }

  /** When the failover ended (the stall clock's start), or {@link Long#MAX_VALUE} while it runs. */
  long settledAtMillis() {
    return settledAtMs;
  }

  /** The failover watched, or null when no core was killed. */
  Result result() {
    if (killed == null) {
      return null;
    }
    return new Result(
        killed,
        dutiesHeld,
        dutiesMovedMs,
        handledMs,
        settledAtMs - killedAtMs,
        waiting,
        stopped && (dutiesMovedMs < 0 || handledMs < 0));
  }

  /** One poll's reading of the cluster, the streams and the Changes open at the kill. */
  void observe(long nowMs, JsonNode cluster, JsonNode streams, Map<String, ChangeMark> now) {
    observeDuties(nowMs, cluster);
    List<String> still = new ArrayList<>(unacked(deliveredAtKill, consumers(streams)));
    still.addAll(unmoved(openAtKill, now));
    if (handledMs < 0 && still.isEmpty()) {
      handledMs = nowMs - killedAtMs;
    }
    if (dutiesMovedMs < 0) {
      still.add(0, "duties held by " + ownersNotLive(cluster, killed));
    }
    waiting = still;
  }

  /** Records when every duty was first seen held by a live node. */
  void observeDuties(long nowMs, JsonNode cluster) {
    if (dutiesMovedMs < 0 && dutiesHeldByLiveNodes(cluster, killed)) {
      dutiesMovedMs = nowMs - killedAtMs;
    }
  }

  /** Every duty has an owner, and each owner is a live node other than {@code killed}. */
  static boolean dutiesHeldByLiveNodes(JsonNode cluster, String killed) {
    return ownersNotLive(cluster, killed).isEmpty();
  }

  private static List<String> ownersNotLive(JsonNode cluster, String killed) {
    Set<String> live =
        stream(cluster.path("nodes"))
            .filter(n -> "live".equals(n.path("state").asText()))
            .map(n -> n.path("nodeId").asText())
            .filter(id -> !id.equals(killed))
            .collect(Collectors.toSet());
    return stream(cluster.path("duties"))
        .filter(d -> d.path("owner").isNull() || !live.contains(d.path("owner").asText()))
        .map(d -> d.path("duty").asText() + ": " + d.path("owner").asText("nobody"))
        .toList();
  }

  /** The queue consumers that still hold deliveries from before the kill, with their figures. */
  static List<String> unacked(Map<String, Consumer> atKill, List<Consumer> now) {
    List<String> out = new ArrayList<>();
    for (Consumer c : now) {
      Consumer before = atKill.get(c.key());
      if (before != null
          && Queue.STREAM_NAME.equals(c.stream())
          && c.ackPending() > 0
          && c.ackFloor() < before.delivered()) {
        out.add(
            c.key()
                + ": ack floor "
                + c.ackFloor()
                + " below "
                + before.delivered()
                + " delivered at the kill, "
                + c.ackPending()
                + " ack-pending");
      }
    }
    return out;
  }

  /** The Changes open at the kill that have not moved since. */
  static List<String> unmoved(Map<String, ChangeMark> atKill, Map<String, ChangeMark> now) {
    List<String> out = new ArrayList<>();
    for (ChangeMark before : atKill.values()) {
      ChangeMark after = now.get(before.changeId());
      if (after == null || !after.movedSince(before)) {
        out.add(before.changeId() + " (" + before.state() + ") has not moved since the kill");
      }
    }
    return out;
  }

  static List<Consumer> consumers(JsonNode streams) {
    List<Consumer> out = new ArrayList<>();
    for (JsonNode s : streams.path("streams")) {
      for (JsonNode c : s.path("consumers")) {
        out.add(
            new Consumer(
                s.path("name").asText(),
                c.path("name").asText(),
                c.path("ackPending").asLong(),
                c.path("ackFloor").asLong(),
                c.path("delivered").asLong()));
      }
    }
    return out;
  }

  static Map<String, Consumer> byKey(List<Consumer> consumers) {
    Map<String, Consumer> out = new LinkedHashMap<>();
    consumers.forEach(c -> out.put(c.key(), c));
    return out;
  }

  /** The Changes of one {@code GET /api/projects/{id}/changes} answer, without their Events. */
  static List<ChangeMark> changes(JsonNode list) {
    return stream(list.path("changes"))
        .map(
            c ->
                new ChangeMark(
                    c.path("changeId").asText(),
                    c.path("state").asText(),
                    c.path("tasksCompleted").asLong(),
                    -1))
        .toList();
  }

  private List<ChangeMark> changes() throws IOException, InterruptedException {
    List<ChangeMark> out = new ArrayList<>();
    for (String p : projects) {
      out.addAll(changes(api.changes(p)));
    }
    return out;
  }

  /** The Changes open at the kill now; Events read only for those that moved no other way. */
  private Map<String, ChangeMark> current() throws IOException, InterruptedException {
    Map<String, ChangeMark> now = new LinkedHashMap<>();
    for (ChangeMark m : changes()) {
      ChangeMark before = openAtKill.get(m.changeId());
      if (before != null) {
        now.put(m.changeId(), m.movedSince(before) ? m : withEvents(m));
      }
    }
    return now;
  }

  private ChangeMark withEvents(ChangeMark m) throws IOException, InterruptedException {
    long events = api.events(m.changeId()).path("events").size();
    return new ChangeMark(m.changeId(), m.state(), m.tasksCompleted(), events);
  }

  private static java.util.stream.Stream<JsonNode> stream(JsonNode array) {
    List<JsonNode> out = new ArrayList<>();
    array.forEach(out::add);
    return out.stream();
  }
}
