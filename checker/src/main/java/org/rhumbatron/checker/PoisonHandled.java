package org.rhumbatron.checker;

import static org.rhumbatron.checker.HistoryChecker.CLAIMING;
import static org.rhumbatron.checker.HistoryChecker.MALFORMED_NOT_AT_ONCE;
import static org.rhumbatron.checker.HistoryChecker.POISON_NOT_HANDLED;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.ConsumerInfo;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.EventStreams;

/** Every poison message the check sent ended well, by its kind; the outcomes counted. */
final class PoisonHandled {
  private static final ObjectMapper JSON = new ObjectMapper();
  // The reason a queue consumer gives a body it cannot decode, e.g. "malformed command envelope: ".
  private static final Pattern QUEUE_DECODE_ERROR = Pattern.compile("malformed [a-z-]+ envelope: ");

  private final Database db;
  private final JetStreamManagement jsm;

  PoisonHandled(Database db, JetStreamManagement jsm) {
    this.db = db;
    this.jsm = jsm;
  }

  /**
   * A poison message ended well when each claiming consumer claimed or dead-lettered it (event
   * streams), or it is in a dead letter or named by a log line of core (queues). A message that
   * never decodes ends well only at once and with its decode error named: on an event stream each
   * claiming consumer dead-lettered it on its first failure, and on a queue its dead letter or log
   * line gives the decode error as the reason (the queue consumer's way for a body it cannot read).
   */
  void check(CheckReport report, HistoryChecker.Run run) throws Exception {
    if (run.poison().isEmpty()) {
      return;
    }
    List<DeadLetter> rows = deadLetters();
    Map<String, Set<String>> deadLetteredBy = deadLetteredBy(rows);
    Map<String, Map<String, Long>> malformedEnds = malformedEnds(rows);
    Set<String> inLogs = new HashSet<>();
    Set<String> malformedInLogs = new HashSet<>();
    inLogs(run.coreLogs(), inLogs, malformedInLogs);
    Map<String, Set<String>> claimedBy = claimedBy(run);
    Map<String, Long> outcomes = new TreeMap<>();
    Set<String> described = new HashSet<>();
    for (Poison.Sent p : run.poison()) {
      String outcome;
      String retried = null;
      if (run.poisonCutByLostTail().contains(p.marker())) {
        outcome = "cut_by_lost_tail";
      } else if (p.eventStream() && p.undecodable()) {
        Map<String, Long> ends = malformedEnds.getOrDefault(p.marker(), Map.of());
        boolean atOnce =
            CLAIMING.stream().allMatch(s -> ONE_FAILURE.equals(ends.get(s.durableName())));
        outcome = atOnce ? "event_malformed_dead_lettered_at_once" : null;
        Set<String> done = deadLetteredBy.getOrDefault(p.marker(), Set.of());
        if (!atOnce && CLAIMING.stream().allMatch(s -> done.contains(s.durableName()))) {
          retried = "dead-lettered by " + done + ", at once with the decode error by " + ends;
        }
      } else if (p.eventStream()) {
        Set<String> done = new HashSet<>(claimedBy.getOrDefault(p.marker(), Set.of()));
        done.addAll(deadLetteredBy.getOrDefault(p.marker(), Set.of()));
        boolean all = CLAIMING.stream().allMatch(s -> done.contains(s.durableName()));
        outcome = all ? "event_claimed_or_dead_lettered" : null;
      } else if (p.undecodable()) {
        if (malformedEnds.containsKey(p.marker())) {
          outcome = "command_malformed_dead_lettered";
        } else if (malformedInLogs.contains(p.marker())) {
          outcome = "command_malformed_rejected_in_log";
        } else {
          outcome = null;
          if (deadLetteredBy.containsKey(p.marker()) || inLogs.contains(p.marker())) {
            retried = "dead-lettered or rejected without its decode error as the reason";
          }
        }
      } else if (deadLetteredBy.containsKey(p.marker())) {
        outcome = "command_dead_lettered";
      } else if (inLogs.contains(p.marker())) {
        outcome = "command_rejected_in_log";
      } else {
        outcome = null;
      }
      String what = p.marker() + " (" + p.kind() + " on " + p.subject() + ")";
      if (retried != null) {
        report.violation(MALFORMED_NOT_AT_ONCE, what + ": " + retried);
      } else if (outcome == null) {
        report.violation(POISON_NOT_HANDLED, what);
        if (p.eventStream() && described.add(p.subject())) {
          describeConsumers(report, streamOf(p.subject()));
        }
      } else {
        outcomes.merge(outcome, 1L, Long::sum);
      }
    }
    outcomes.forEach((k, n) -> report.total("poison_" + k, n));
  }

  /** The failures an event dead letter of a malformed record counts when it came at once. */
  private static final Long ONE_FAILURE = 1L;

  /** A dead letter's row: where a poison marker may be named. */
  private record DeadLetter(String commandId, String command, String reason, long failures) {
    String text() {
      return commandId + " " + command + " " + reason;
    }
  }

  private List<DeadLetter> deadLetters() {
    return db.read(
        tx ->
            tx.query(
                "SELECT command_id, command, reason, delivery_count FROM dead_letters",
                rs ->
                    new DeadLetter(
                        rs.getString(1), rs.getString(2), rs.getString(3), rs.getLong(4))));
  }

  /** Per poison marker in a dead letter, the consumers of the batches that dead-lettered it. */
  private static Map<String, Set<String>> deadLetteredBy(List<DeadLetter> rows) {
    Map<String, Set<String>> deadLetteredBy = new HashMap<>();
    for (DeadLetter row : rows) {
      for (String m : Poison.markers(row.text())) {
        deadLetteredBy.computeIfAbsent(m, k -> new HashSet<>()).add(consumerOf(row.commandId()));
      }
    }
    return deadLetteredBy;
  }

  /**
   * Per poison marker dead-lettered with its decode error as the reason, per consumer, the failures
   * its dead letter counts: of an event batch, the marker is a record's message id with a {@code
   * decodeError} and the reason names a malformed envelope; of a queue (consumer ""), the reason is
   * the queue consumer's for a body it cannot decode.
   */
  private static Map<String, Map<String, Long>> malformedEnds(List<DeadLetter> rows)
      throws IOException {
    Map<String, Map<String, Long>> ends = new HashMap<>();
    for (DeadLetter row : rows) {
      String reason = row.reason() == null ? "" : row.reason();
      String consumer = consumerOf(row.commandId());
      if (consumer.isEmpty()) {
        if (QUEUE_DECODE_ERROR.matcher(reason).lookingAt()) {
          Poison.markers(row.text())
              .forEach(m -> ends.computeIfAbsent(m, k -> new HashMap<>()).put("", row.failures()));
        }
        continue;
      }
      if (!reason.contains("malformed envelope at stream sequence")) {
        continue;
      }
      for (JsonNode record : JSON.readTree(row.command()).path("records")) {
        String id = record.path("messageId").asText("");
        if (Poison.MARKER.matcher(id).matches()
            && !record.path("decodeError").asText("").isBlank()) {
          ends.computeIfAbsent(id, k -> new HashMap<>()).merge(consumer, row.failures(), Math::max);
        }
      }
    }
    return ends;
  }

  /**
   * The poison markers that core's logs name into {@code named}, and those named on a line that
   * gives a decode error (a malformed envelope) into {@code malformed}.
   */
  private static void inLogs(List<Path> coreLogs, Set<String> named, Set<String> malformed)
      throws IOException {
    for (Path log : coreLogs) {
      if (Files.exists(log)) {
        try (Stream<String> lines = Files.lines(log, StandardCharsets.ISO_8859_1)) {
          lines
              .filter(l -> l.contains("poison-"))
              .forEach(
                  l -> {
                    List<String> markers = Poison.markers(l);
                    named.addAll(markers);
                    if (QUEUE_DECODE_ERROR.matcher(l).find()) {
                      malformed.addAll(markers);
                    }
                  });
        }
      }
    }
  }

  /** Per poison marker sent on an event stream, the claiming consumers that claimed its Event. */
  private Map<String, Set<String>> claimedBy(HistoryChecker.Run run) {
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
    return claimedBy;
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
