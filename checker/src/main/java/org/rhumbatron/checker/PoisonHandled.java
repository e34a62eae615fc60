package org.rhumbatron.checker;

import static org.rhumbatron.checker.HistoryChecker.CLAIMING;
import static org.rhumbatron.checker.HistoryChecker.POISON_NOT_HANDLED;

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
import java.util.stream.Stream;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.EventStreams;

/** Every poison message the check sent ended well, by its kind; the outcomes counted. */
final class PoisonHandled {
  private final Database db;
  private final JetStreamManagement jsm;

  PoisonHandled(Database db, JetStreamManagement jsm) {
    this.db = db;
    this.jsm = jsm;
  }

  /**
   * A poison message ended well when each claiming consumer claimed or dead-lettered it (event
   * streams), or it is in a dead letter or named by a log line of core (queues).
   */
  void check(CheckReport report, HistoryChecker.Run run) throws Exception {
    if (run.poison().isEmpty()) {
      return;
    }
    Map<String, Set<String>> deadLetteredBy = deadLetteredBy();
    Set<String> inLogs = inLogs(run.coreLogs());
    Map<String, Set<String>> claimedBy = claimedBy(run);
    Map<String, Long> outcomes = new TreeMap<>();
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
      } else if (deadLetteredBy.containsKey(p.marker())) {
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

  /** A dead letter's row: where a poison marker may be named. */
  private record DeadLetter(String commandId, String command, String reason) {}

  /** Per poison marker in a dead letter, the consumers of the batches that dead-lettered it. */
  private Map<String, Set<String>> deadLetteredBy() {
    Map<String, Set<String>> deadLetteredBy = new HashMap<>();
    db.read(
            tx ->
                tx.query(
                    "SELECT command_id, command, reason FROM dead_letters",
                    rs -> new DeadLetter(rs.getString(1), rs.getString(2), rs.getString(3))))
        .forEach(
            row -> {
              String text = row.commandId() + " " + row.command() + " " + row.reason();
              for (String m : Poison.markers(text)) {
                deadLetteredBy
                    .computeIfAbsent(m, k -> new HashSet<>())
                    .add(consumerOf(row.commandId()));
              }
            });
    return deadLetteredBy;
  }

  /** The poison markers that core's logs name. */
  private static Set<String> inLogs(List<Path> coreLogs) throws IOException {
    Set<String> inLogs = new HashSet<>();
    for (Path log : coreLogs) {
      if (Files.exists(log)) {
        try (Stream<String> lines = Files.lines(log, StandardCharsets.ISO_8859_1)) {
          lines.filter(l -> l.contains("poison-")).forEach(l -> inLogs.addAll(Poison.markers(l)));
        }
      }
    }
    return inLogs;
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
