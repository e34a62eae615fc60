package org.rhumbatron.checker;

import com.fasterxml.jackson.databind.JsonNode;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.StreamState;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.rhumbatron.lifecycle.ChangeInfo;
import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.EnvelopeException;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.EventType;

/**
 * Reads a settled run's history (the outbox and the other tables, the 8 event streams, the audit
 * archive) and counts what must never happen. It only reads: core may still run.
 */
public final class HistoryChecker {
  public static final String EVENTS_LOST = "events_lost";
  public static final String EVENTS_PUBLISHED_TWICE = "events_published_twice";
  public static final String APPLIED_NEVER = "applied_never.";
  public static final String APPLIED_TWICE = "applied_twice.";
  public static final String TASK_COMPLETED_TWICE = "task_completed_twice";
  public static final String CANDIDATE_COMPOSED_TWICE = "candidate_composed_twice";
  public static final String VERIFICATION_TWICE = "verification_step_twice";
  public static final String RELEASE_TWICE = "release_step_twice";
  public static final String CHANGE_ENDED_TWICE = "change_ended_twice";
  public static final String SECOND_CHANGE_FOR_REQUEST = "second_change_for_request_id";
  public static final String CHANGES_NOT_ENDED = "changes_not_ended";
  public static final String POISON_NOT_HANDLED = "poison_not_dead_lettered_or_rejected";
  public static final String CORE_CRASHES = "core_crashes_caused_by_input";

  /** The consumers that claim each Event in the database, beside the archive. */
  static final List<Subscription> CLAIMING =
      List.of(
          Subscription.CAUSAL_ROUTER,
          Subscription.PROJECT_VIEW_PROJECTOR,
          Subscription.ANALYTICS_PROJECTOR);

  /**
   * Consumers no nudge runs: core reads them on the sweep and whenever they are behind (DESIGN.md
   * 4a), so the settle waits for them apart, and after it an Event they have not applied is a
   * violation like any other.
   */
  static final Set<Subscription> CAUGHT_UP =
      Set.of(Subscription.ANALYTICS_PROJECTOR, Subscription.AUDIT_ARCHIVER);

  private static final Set<EventType> CHANGE_ENDS =
      Set.of(
          EventType.CHANGE_COMPLETED,
          EventType.CHANGE_FAILED,
          EventType.CHANGE_CANCELLED,
          EventType.CHANGE_DECLINED,
          EventType.CHANGE_NOT_SELECTED);

  /**
   * What the run itself knows beside the history.
   *
   * @param changesByRequest per client request id, every Change id the API answered with
   * @param poison the poison messages sent
   * @param crashes core exits that no fault caused, each described
   * @param coreLogs core's log files, where a rejected poison message is named
   * @param archive the evidence bucket with the audit archive, or null when it is out of reach
   */
  /**
   * What the run did: the Changes it asked for, the poison it sent and the markers of those among
   * it that a lost-tail fault cut from the server's store (no outbox holds them, so nothing can
   * send them again), core's unasked exits, its logs and the archive.
   */
  public record Run(
      Map<String, Set<String>> changesByRequest,
      List<Poison.Sent> poison,
      Set<String> poisonCutByLostTail,
      List<String> crashes,
      List<Path> coreLogs,
      Bucket archive) {}

  private final Database db;
  private final JetStreamManagement jsm;
  private final EnvelopeCodec codec = new EnvelopeCodec();
  // Fillers core wrote after a lost tail (Headers.FILLER), seen by readStreams.
  private long fillers;

  public HistoryChecker(Database db, JetStreamManagement jsm) {
    this.db = db;
    this.jsm = jsm;
  }

  /** A message of an event stream as the server holds it. */
  record Stored(int stream, long seq, String msgId, Event event) {}

  public CheckReport check(Run run) throws Exception {
    CheckReport report = new CheckReport();
    for (String v :
        List.of(
            EVENTS_LOST,
            EVENTS_PUBLISHED_TWICE,
            TASK_COMPLETED_TWICE,
            CANDIDATE_COMPOSED_TWICE,
            VERIFICATION_TWICE,
            RELEASE_TWICE,
            CHANGE_ENDED_TWICE,
            SECOND_CHANGE_FOR_REQUEST,
            CHANGES_NOT_ENDED,
            POISON_NOT_HANDLED,
            CORE_CRASHES)) {
      report.expect(v);
    }
    Set<String> poisonMarkers = new HashSet<>();
    run.poison().forEach(p -> poisonMarkers.add(p.marker()));

    List<Stored> stored = readStreams(poisonMarkers);
    Map<String, Integer> published = new HashMap<>();
    Map<String, Stored> firstStored = new HashMap<>();
    List<Event> events = new ArrayList<>();
    for (Stored s : stored) {
      if (s.msgId() != null && poisonMarkers.contains(s.msgId())) {
        continue;
      }
      if (s.event() == null) {
        report.note(
            "undecodable message at "
                + EventStreams.streamName(s.stream())
                + ":"
                + s.seq()
                + " that the check did not send");
        continue;
      }
      if (published.merge(s.event().eventId(), 1, Integer::sum) == 1) {
        events.add(s.event());
        firstStored.put(s.event().eventId(), s);
      } else {
        report.violation(EVENTS_PUBLISHED_TWICE, s.event().eventId());
      }
    }
    report.total("events_published", published.size());

    List<String[]> outbox =
        db.read(
            tx ->
                tx.query(
                    "SELECT event_id, state FROM outbox",
                    rs -> new String[] {rs.getString(1), rs.getString(2)}));
    report.total("events_committed", outbox.size());
    report.total("stream_fillers", fillers);
    for (String[] row : outbox) {
      if (!published.containsKey(row[0])) {
        report.violation(EVENTS_LOST, row[0] + " (" + row[1] + ")");
      }
    }

    Set<String> eventIds = published.keySet();
    for (Subscription s : CLAIMING) {
      String name = APPLIED_NEVER + s.durableName();
      report.expect(name);
      Set<String> claimed =
          new HashSet<>(
              db.read(
                  tx ->
                      tx.query(
                          "SELECT event_id FROM processed_events WHERE consumer = ?",
                          rs -> rs.getString(1),
                          s.durableName())));
      for (String id : eventIds) {
        if (!claimed.contains(id)) {
          report.violation(name, id);
        }
      }
    }
    checkTwiceInTables(report);
    ArchiveCheck.check(report, run.archive(), firstStored.keySet(), poisonMarkers);
    EpochOrder.check(db, report);
    checkEffects(report, events);
    checkChanges(report, run.changesByRequest());
    ViewAgreement.check(db, report);
    checkPoison(report, run);
    run.crashes().forEach(c -> report.violation(CORE_CRASHES, c));
    report.total("commands", commandsStored());
    report.total("dead_letters", db.read(tx -> tx.queryLong("SELECT COUNT(*) FROM dead_letters")));
    report.total("poison_sent", run.poison().size());
    return report;
  }

  private List<Stored> readStreams(Set<String> poisonMarkers)
      throws IOException, JetStreamApiException {
    List<Stored> out = new ArrayList<>();
    fillers = 0;
    for (int i = 0; i < EventStreams.STREAM_COUNT; i++) {
      String stream = EventStreams.streamName(i);
      StreamState state = jsm.getStreamInfo(stream).getStreamState();
      for (long seq = state.getFirstSequence(); seq <= state.getLastSequence(); seq++) {
        MessageInfo m;
        try {
          m = jsm.getMessage(stream, seq);
        } catch (JetStreamApiException deleted) {
          continue;
        }
        if (m.getHeaders() != null
            && m.getHeaders().containsKey(org.rhumbatron.protocol.Headers.FILLER)) {
          fillers++;
          continue;
        }
        String msgId = m.getHeaders() == null ? null : m.getHeaders().getFirst("Nats-Msg-Id");
        Event event = null;
        if (msgId == null || !poisonMarkers.contains(msgId)) {
          try {
            event = codec.decodeEvent(m.getData());
          } catch (EnvelopeException malformed) {
            event = null;
          }
        }
        out.add(new Stored(i, seq, msgId, event));
      }
    }
    return out;
  }

  private long commandsStored() throws IOException, JetStreamApiException {
    return jsm.getStreamInfo(org.rhumbatron.protocol.Queue.STREAM_NAME)
        .getStreamState()
        .getLastSequence();
  }

  /** Effects a claim cannot hold off by its key: the feed row and the analytics point. */
  private void checkTwiceInTables(CheckReport report) throws Exception {
    String feed = APPLIED_TWICE + Subscription.PROJECT_VIEW_PROJECTOR.durableName();
    report.expect(feed);
    db.read(
            tx ->
                tx.query(
                    "SELECT event_id FROM project_events GROUP BY project_id, event_id"
                        + " HAVING COUNT(*) > 1",
                    rs -> rs.getString(1)))
        .forEach(id -> report.violation(feed, id));
    String analytics = APPLIED_TWICE + Subscription.ANALYTICS_PROJECTOR.durableName();
    report.expect(analytics);
    db.read(
            tx ->
                tx.query(
                    "SELECT event_id FROM platform_metrics WHERE binding = 'EVENT_METRICS'"
                        + " AND event_id IS NOT NULL GROUP BY event_id, name HAVING COUNT(*) > 1",
                    rs -> rs.getString(1)))
        .forEach(id -> report.violation(analytics, id));
  }

  /** Distinct Events that record one effect: each effect's key must have one. */
  private void checkEffects(CheckReport report, List<Event> events) {
    Map<String, Set<String>> byEffect = new HashMap<>();
    for (Event e : events) {
      String effect = effectKey(e);
      if (effect != null) {
        byEffect.computeIfAbsent(effect, k -> new HashSet<>()).add(e.eventId());
      }
    }
    byEffect.forEach(
        (key, ids) -> {
          if (ids.size() > 1) {
            int colon = key.indexOf('|');
            report.violation(key.substring(0, colon), key.substring(colon + 1) + " " + ids);
          }
        });
    report.total("events_checked_for_effects", events.size());
  }

  /** {@code violation|id} of the one effect {@code e} records, or null. */
  static String effectKey(Event e) {
    JsonNode p = e.payload();
    EventType t = e.eventType();
    if (t == EventType.TASK_COMPLETED) {
      return TASK_COMPLETED_TWICE + "|" + e.taskId() + " attempt " + p.path("attempt").asText("?");
    }
    if (t == EventType.CANDIDATE_CREATED) {
      return CANDIDATE_COMPOSED_TWICE + "|" + p.path("candidateId").asText(e.changeId());
    }
    if (t == EventType.CANDIDATE_VERIFIED || t == EventType.CANDIDATE_REJECTED) {
      return VERIFICATION_TWICE + "|" + p.path("candidateId").asText(e.changeId());
    }
    if (t == EventType.RELEASE_COMPLETED || t == EventType.RELEASE_FAILED) {
      return RELEASE_TWICE + "|" + p.path("releaseId").asText(e.changeId()) + " " + t.wireName();
    }
    if (CHANGE_ENDS.contains(t)) {
      return CHANGE_ENDED_TWICE + "|" + e.changeId();
    }
    return null;
  }

  private void checkChanges(CheckReport report, Map<String, Set<String>> byRequest)
      throws Exception {
    byRequest.forEach(
        (request, ids) -> {
          if (ids.size() > 1) {
            report.violation(SECOND_CHANGE_FOR_REQUEST, request + " " + ids);
          }
        });
    db.read(
            tx ->
                tx.query(
                    "SELECT project_id, client_request_id, COUNT(*) FROM changes"
                        + " GROUP BY project_id, client_request_id HAVING COUNT(*) > 1",
                    rs -> rs.getString(1) + "/" + rs.getString(2)))
        .forEach(id -> report.violation(SECOND_CHANGE_FOR_REQUEST, id));
    List<String[]> changes =
        db.read(
            tx ->
                tx.query(
                    "SELECT change_id, state FROM changes",
                    rs -> new String[] {rs.getString(1), rs.getString(2)}));
    Map<String, Long> byState = new java.util.TreeMap<>();
    for (String[] c : changes) {
      byState.merge(c[1], 1L, Long::sum);
      if (ChangeInfo.OPEN_STATES.contains(c[1])) {
        report.violation(CHANGES_NOT_ENDED, c[0] + " (" + c[1] + "; " + whereItStands(c[0]) + ")");
      }
    }
    report.total("changes", changes.size());
    byState.forEach((state, n) -> report.total("changes_" + state, n));
  }

  /** A stuck Change's Tasks by state and the dead letters of its commands. */
  private String whereItStands(String changeId) {
    List<String> tasks =
        db.read(
            tx ->
                tx.query(
                    "SELECT state, COUNT(*) FROM tasks WHERE change_id = ? GROUP BY state"
                        + " ORDER BY state",
                    rs -> rs.getLong(2) + " " + rs.getString(1),
                    changeId));
    long deadLetters =
        db.read(
            tx ->
                tx.queryLong(
                    "SELECT COUNT(*) FROM dead_letters WHERE command LIKE ?",
                    "%" + changeId + "%"));
    return (tasks.isEmpty() ? "no tasks" : "tasks " + String.join(", ", tasks))
        + "; dead letters "
        + deadLetters;
  }

  /**
   * A poison message ended well when each claiming consumer claimed or dead-lettered it (event
   * streams), or it is in a dead letter or named by a log line of core (queues).
   */
  private void checkPoison(CheckReport report, Run run) throws Exception {
    if (run.poison().isEmpty()) {
      return;
    }
    Set<String> inDeadLetters = new HashSet<>();
    Map<String, Set<String>> deadLetteredBy = new HashMap<>();
    db.read(
            tx ->
                tx.query(
                    "SELECT command_id, command, reason FROM dead_letters",
                    rs -> new String[] {rs.getString(1), rs.getString(2), rs.getString(3)}))
        .forEach(
            row -> {
              String text = row[0] + " " + row[1] + " " + row[2];
              for (String m : Poison.markers(text)) {
                inDeadLetters.add(m);
                deadLetteredBy.computeIfAbsent(m, k -> new HashSet<>()).add(consumerOf(row[0]));
              }
            });
    Set<String> inLogs = new HashSet<>();
    for (Path log : run.coreLogs()) {
      if (Files.exists(log)) {
        try (Stream<String> lines = Files.lines(log, StandardCharsets.ISO_8859_1)) {
          lines.filter(l -> l.contains("poison-")).forEach(l -> inLogs.addAll(Poison.markers(l)));
        }
      }
    }
    Map<String, Set<String>> claimedBy = new HashMap<>();
    for (Subscription s : CLAIMING) {
      for (Poison.Sent p : run.poison()) {
        if (p.decodedId() != null && p.eventStream()) {
          boolean claimed =
              db.read(
                      tx ->
                          tx.queryLong(
                              "SELECT COUNT(*) FROM processed_events WHERE consumer = ?"
                                  + " AND event_id = ?",
                              s.durableName(),
                              p.decodedId()))
                  > 0;
          if (claimed) {
            claimedBy.computeIfAbsent(p.marker(), k -> new HashSet<>()).add(s.durableName());
          }
        }
      }
    }
    Map<String, Long> outcomes = new java.util.TreeMap<>();
    Set<String> described = new HashSet<>();
    for (Poison.Sent p : run.poison()) {
      String outcome;
      if (run.poisonCutByLostTail().contains(p.marker())) {
        outcome = "cut_by_lost_tail";
      } else if (p.eventStream()) {
        Set<String> done = new HashSet<>(claimedBy.getOrDefault(p.marker(), Set.of()));
        done.addAll(deadLetteredBy.getOrDefault(p.marker(), Set.of()));
        boolean all = CLAIMING.stream().allMatch(s -> done.contains(s.durableName()));
        outcome = all ? "event_claimed_or_dead_lettered" : null;
      } else if (inDeadLetters.contains(p.marker())) {
        outcome = "command_dead_lettered";
      } else if (inLogs.contains(p.marker())) {
        outcome = "command_rejected_in_log";
      } else {
        outcome = null;
      }
      if (outcome == null) {
        report.violation(
            POISON_NOT_HANDLED, p.marker() + " (" + p.kind() + " on " + p.subject() + ")");
        if (p.eventStream() && described.add(p.subject())) {
          describeConsumers(report, streamOf(p.subject()));
        }
      } else {
        outcomes.merge(outcome, 1L, Long::sum);
      }
    }
    outcomes.forEach((k, n) -> report.total("poison_" + k, n));
  }

  /** Where the claiming consumers of a stream stand, for a report that names unhandled poison. */
  private void describeConsumers(CheckReport report, int stream) throws IOException {
    String name = EventStreams.streamName(stream);
    for (Subscription s : CLAIMING) {
      try {
        ConsumerInfo c = jsm.getConsumerInfo(name, s.durableName());
        report.note(
            String.format(
                "%s %s: delivered %d, ack floor %d, pending %d, ack pending %d, redelivered %d",
                name,
                s.durableName(),
                c.getDelivered().getStreamSequence(),
                c.getAckFloor().getStreamSequence(),
                c.getNumPending(),
                c.getNumAckPending(),
                c.getRedelivered()));
      } catch (JetStreamApiException e) {
        report.note(name + " " + s.durableName() + ": no consumer (" + e.getMessage() + ")");
      }
    }
  }

  private static int streamOf(String subject) {
    for (int i = 0; i < EventStreams.STREAM_COUNT; i++) {
      if (EventStreams.streamSubject(i).equals(subject)) {
        return i;
      }
    }
    throw new IllegalArgumentException("not an event stream subject: " + subject);
  }

  /** The consumer of an event batch dead letter ({@code batch:<consumer>:<key>}), else "". */
  private static String consumerOf(String commandId) {
    if (!commandId.startsWith("batch:")) {
      return "";
    }
    int end = commandId.indexOf(':', "batch:".length());
    return end < 0 ? "" : commandId.substring("batch:".length(), end);
  }
}
