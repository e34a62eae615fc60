package org.rhumbatron.checker;

import io.nats.client.JetStreamManagement;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.rhumbatron.checker.StreamReader.Stored;
import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.EventStreams;

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
  public static final String MALFORMED_NOT_AT_ONCE = "malformed_poison_not_dead_lettered_at_once";
  public static final String CORE_CRASHES = "core_crashes_caused_by_input";

  /** The consumers that claim each Event in the database, beside the archive. */
  static final List<Subscription> CLAIMING =
      List.of(
          Subscription.CAUSAL_ROUTER,
          Subscription.PROJECT_VIEW_PROJECTOR,
          Subscription.ANALYTICS_PROJECTOR);

  /**
   * Consumers no nudge runs: core reads them on the sweep and whenever they are behind, so the
   * settle waits for them apart, and after it an Event they have not applied is a violation like
   * any other.
   */
  static final Set<Subscription> CAUGHT_UP =
      Set.of(Subscription.ANALYTICS_PROJECTOR, Subscription.AUDIT_ARCHIVER);

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
  private final StreamReader streams;

  public HistoryChecker(Database db, JetStreamManagement jsm) {
    this.db = db;
    this.jsm = jsm;
    this.streams = new StreamReader(jsm);
  }

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
            MALFORMED_NOT_AT_ONCE,
            CORE_CRASHES)) {
      report.expect(v);
    }
    Set<String> poisonMarkers = new HashSet<>();
    run.poison().forEach(p -> poisonMarkers.add(p.marker()));

    Map<String, Stored> firstStored =
        publishedOnce(report, streams.read(poisonMarkers), poisonMarkers);
    report.total("events_published", firstStored.size());
    checkLost(report, firstStored.keySet());
    checkApplied(report, firstStored.keySet());
    checkTwiceInTables(report);
    ArchiveCheck.check(report, run.archive(), firstStored.keySet(), poisonMarkers);
    EpochOrder.check(db, report);
    EffectsOnce.check(report, firstStored.values().stream().map(Stored::event).toList());
    new ChangeEnds(db).check(report, run.changesByRequest());
    ViewAgreement.check(db, report);
    new PoisonHandled(db, jsm).check(report, run);
    run.crashes().forEach(c -> report.violation(CORE_CRASHES, c));
    report.total("commands", streams.commandsStored());
    report.total("dead_letters", db.read(tx -> tx.queryLong("SELECT COUNT(*) FROM dead_letters")));
    report.total("poison_sent", run.poison().size());
    return report;
  }

  /**
   * Each Event stored once in the event streams, the check's poison aside; returns the first
   * message of each by event id, in the order stored.
   */
  private static Map<String, Stored> publishedOnce(
      CheckReport report, List<Stored> stored, Set<String> poisonMarkers) {
    Map<String, Stored> firstStored = new LinkedHashMap<>();
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
      if (firstStored.putIfAbsent(s.event().eventId(), s) != null) {
        report.violation(EVENTS_PUBLISHED_TWICE, s.event().eventId());
      }
    }
    return firstStored;
  }

  /** An outbox row's Event and its state as stored, unparsed: the check trusts no reader of it. */
  private record OutboxRow(String eventId, String state) {}

  /** Every outbox row's Event is in the streams. */
  private void checkLost(CheckReport report, Set<String> published) {
    List<OutboxRow> outbox =
        db.read(
            tx ->
                tx.query(
                    "SELECT event_id, state FROM outbox",
                    rs -> new OutboxRow(rs.getString(1), rs.getString(2))));
    report.total("events_committed", outbox.size());
    report.total("stream_fillers", streams.fillers());
    for (OutboxRow row : outbox) {
      if (!published.contains(row.eventId())) {
        report.violation(EVENTS_LOST, row.eventId() + " (" + row.state() + ")");
      }
    }
  }

  /** Every published Event claimed by each claiming consumer. */
  private void checkApplied(CheckReport report, Set<String> eventIds) {
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
}
