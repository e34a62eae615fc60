package org.rhumbatron.checker;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.api.MessageInfo;
import java.io.IOException;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.HdrHistogram.Histogram;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.Headers;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.workload.LatencyStats;

/**
 * What was delivered and not yet settled when a node was killed, and how long until it was handled:
 * each Event a router consumer had delivered above its ack floor claimed by that consumer ({@code
 * processed_events}), each Command a queue consumer had delivered gone from the work-queue stream
 * (acked or terminated). Read from the server and the database as an auditor would; poison (what
 * does not decode) is left out, as it waits for its failure limit by design. A Command waiting out
 * a retry delay that a live node's handler asked for counts too, so the Commands' figure is an
 * upper bound of what the kill cost.
 */
final class InFlightWork {
  static final Duration POLL = Duration.ofMillis(200);
  static final String NOT_HANDLED = "in_flight_work_not_handled";

  /** The unsettled work at one moment: Event ids per consumer, Command sequences. */
  record Snapshot(long atMillis, Map<String, Set<String>> events, Set<Long> commands) {
    int size() {
      int n = commands.size();
      for (Set<String> ids : events.values()) {
        n += ids.size();
      }
      return n;
    }
  }

  private final Clock clock;
  private final String dbUrl;
  private final EnvelopeCodec codec = new EnvelopeCodec();
  private final List<Long> eventsHandled = new ArrayList<>();
  private final List<Long> commandsHandled = new ArrayList<>();
  private final List<String> missed = new ArrayList<>();

  InFlightWork(Clock clock, String dbUrl) {
    this.clock = clock;
    this.dbUrl = dbUrl;
  }

  /** What every consumer has delivered and not settled now. */
  Snapshot take(Connection nats) throws IOException, JetStreamApiException {
    JetStreamManagement jsm = nats.jetStreamManagement();
    long at = clock.millis();
    Map<String, Set<String>> events = new HashMap<>();
    for (int i = 0; i < EventStreams.STREAM_COUNT; i++) {
      String stream = EventStreams.streamName(i);
      for (Subscription s : Subscription.values()) {
        ConsumerInfo c = consumer(jsm, stream, s.durableName());
        if (c == null || c.getNumAckPending() == 0) {
          continue;
        }
        for (long seq = c.getAckFloor().getStreamSequence() + 1;
            seq <= c.getDelivered().getStreamSequence();
            seq++) {
          MessageInfo m = message(jsm, stream, seq);
          if (m != null && decodesAsEvent(m)) {
            events
                .computeIfAbsent(s.durableName(), k -> new HashSet<>())
                .add(m.getHeaders().getFirst(Headers.MSG_ID));
          }
        }
      }
    }
    Set<Long> commands = new HashSet<>();
    for (Queue q : Queue.values()) {
      ConsumerInfo c = consumer(jsm, Queue.STREAM_NAME, q.durableName());
      if (c == null || c.getNumAckPending() == 0) {
        continue;
      }
      for (long seq = c.getAckFloor().getStreamSequence() + 1;
          seq <= c.getDelivered().getStreamSequence();
          seq++) {
        MessageInfo m = message(jsm, Queue.STREAM_NAME, seq);
        if (m != null && q.subject().equals(m.getSubject()) && decodesAsCommand(m)) {
          commands.add(seq);
        }
      }
    }
    return new Snapshot(at, events, commands);
  }

  /**
   * Waits, at most {@code within} from {@code s}, until its Events are claimed and its Commands
   * gone; records each time from {@code killedAtMillis}, or a miss.
   */
  void await(Snapshot s, long killedAtMillis, Duration within, Connection nats, String node)
      throws Exception {
    long deadline = killedAtMillis + within.toMillis();
    JetStreamManagement jsm = nats.jetStreamManagement();
    Map<String, Set<String>> events = new HashMap<>();
    s.events().forEach((k, v) -> events.put(k, new HashSet<>(v)));
    Set<Long> commands = new HashSet<>(s.commands());
    boolean eventsDone = events.isEmpty();
    boolean commandsDone = commands.isEmpty();
    try (java.sql.Connection db = DriverManager.getConnection(dbUrl)) {
      while (!(eventsDone && commandsDone) && clock.millis() < deadline) {
        if (!eventsDone) {
          for (Map.Entry<String, Set<String>> e : events.entrySet()) {
            e.getValue().removeAll(claimed(db, e.getKey(), e.getValue()));
          }
          events.values().removeIf(Set::isEmpty);
          if (events.isEmpty()) {
            eventsDone = true;
            eventsHandled.add(clock.millis() - killedAtMillis);
          }
        }
        if (!commandsDone) {
          commands.removeIf(seq -> gone(jsm, Queue.STREAM_NAME, seq));
          if (commands.isEmpty()) {
            commandsDone = true;
            commandsHandled.add(clock.millis() - killedAtMillis);
          }
        }
        if (!(eventsDone && commandsDone)) {
          Thread.sleep(POLL.toMillis());
        }
      }
    }
    if (!eventsDone || !commandsDone) {
      int left = commands.size();
      for (Set<String> ids : events.values()) {
        left += ids.size();
      }
      missed.add(
          left
              + " of "
              + s.size()
              + " records in flight when "
              + node
              + " was killed were not handled within "
              + within);
    }
  }

  /** The times and the misses; a miss is reported, not a violation (the backstop still holds). */
  void report(CheckReport report) {
    put(report, "inflight_events_after_node_kill_ms", eventsHandled);
    put(report, "inflight_commands_after_node_kill_ms", commandsHandled);
    report.total("inflight_not_handled_in_fault", missed.size());
    missed.forEach(m -> report.note(NOT_HANDLED + ": " + m));
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

  private static Set<String> claimed(java.sql.Connection db, String consumer, Set<String> ids)
      throws java.sql.SQLException {
    Set<String> out = new HashSet<>();
    try (PreparedStatement ps =
        db.prepareStatement(
            "SELECT event_id FROM processed_events WHERE consumer = ? AND event_id = ANY (?)")) {
      ps.setString(1, consumer);
      ps.setArray(2, db.createArrayOf("text", ids.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
    }
    return out;
  }

  private boolean decodesAsEvent(MessageInfo m) {
    if (m.getHeaders() == null || m.getHeaders().getFirst(Headers.MSG_ID) == null) {
      return false;
    }
    try {
      codec.decodeEvent(m.getData());
      return true;
    } catch (RuntimeException poison) {
      return false;
    }
  }

  private boolean decodesAsCommand(MessageInfo m) {
    try {
      codec.decodeCommand(m.getData());
      return true;
    } catch (RuntimeException poison) {
      return false;
    }
  }

  private static ConsumerInfo consumer(JetStreamManagement jsm, String stream, String name)
      throws IOException {
    try {
      return jsm.getConsumerInfo(stream, name);
    } catch (JetStreamApiException missing) {
      return null;
    }
  }

  /** Whether the server answers that it holds no message {@code seq} (not: it did not answer). */
  private static boolean gone(JetStreamManagement jsm, String stream, long seq) {
    try {
      jsm.getMessage(stream, seq);
      return false;
    } catch (JetStreamApiException e) {
      return e.getApiErrorCode() == NO_MESSAGE;
    } catch (IOException unanswered) {
      return false;
    }
  }

  /** JetStream's API error code for "no message found". */
  private static final int NO_MESSAGE = 10037;

  private static MessageInfo message(JetStreamManagement jsm, String stream, long seq) {
    try {
      return jsm.getMessage(stream, seq);
    } catch (JetStreamApiException | IOException gone) {
      return null;
    }
  }
}
