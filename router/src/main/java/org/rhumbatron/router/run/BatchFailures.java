package org.rhumbatron.router.run;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.router.claims.EventClaims;

/**
 * Counts failed deliveries of a batch in {@code k2_batch_failures (consumer, batch_key)}. Below the
 * limit (5) the caller nacks; at the limit the batch becomes one {@code dead_letters} row (kind
 * {@code event_batch}, which an operator can only dismiss) and its events are marked processed, in
 * the same transaction, so the caller acks and the stream flows on. A failed record the consumer
 * already marked processed (dead-lettered before, its ack lost) is only acked again: it neither
 * counts nor keys the batch, so the records that came with it get a dead letter of their own.
 */
public final class BatchFailures {
  /** {@code dead_letters.kind} of a skipped event batch. */
  public static final String EVENT_BATCH = "event_batch";

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Database database;
  private final EventClaims claims;
  private final Clock clock;
  private final int limit;

  public BatchFailures(Database database, EventClaims claims, Clock clock, int limit) {
    this.database = database;
    this.claims = claims;
    this.clock = clock;
    this.limit = limit;
  }

  /** What the caller does with the failed records that were not handled before. */
  public enum Verdict {
    NACK,
    DEAD_LETTERED
  }

  /**
   * One failure counted: the caller acks {@code handledBefore} at once, and the other failed
   * records as {@code verdict} says. {@code batchKey} is null when every record was handled before.
   */
  public record Counted(Verdict verdict, String batchKey, List<EventRecord> handledBefore) {}

  /**
   * The key of a failed batch: its first failed record, by event id, or when it did not decode by
   * stream sequence and a digest of its bytes. A redelivery holds the same first failed record,
   * whatever came with it; a stream that lost its tail hands a sequence out again, and the digest
   * keeps the new record's failures apart from the old one's.
   */
  public static String batchKey(int streamIndex, List<EventRecord> failed) {
    EventRecord first = failed.get(0);
    return first.decoded()
        ? first.event().eventId()
        : EventStreams.streamName(streamIndex)
            + ":"
            + first.streamSequence()
            + ":"
            + digest(first.data());
  }

  private static String digest(byte[] data) {
    try {
      byte[] d =
          java.security.MessageDigest.getInstance("SHA-256")
              .digest(data == null ? new byte[0] : data);
      return java.util.HexFormat.of().formatHex(d, 0, 8);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JVM", e);
    }
  }

  /** Counts one failure of {@code failed}; at the limit dead-letters them (see the class). */
  public Counted recordFailure(
      Subscription subscription, int streamIndex, List<EventRecord> failed, String error) {
    String consumer = subscription.durableName();
    long now = clock.millis();
    return database.inTransaction(
        tx -> {
          claims.fence(tx, streamIndex); // a failure counts only on the stream's holder
          Set<String> processed = processedAmong(tx, consumer, failed);
          List<EventRecord> handledBefore = new ArrayList<>();
          List<EventRecord> open = new ArrayList<>();
          for (EventRecord r : failed) {
            String id = claimId(r);
            (id != null && processed.contains(id) ? handledBefore : open).add(r);
          }
          if (open.isEmpty()) {
            return new Counted(Verdict.DEAD_LETTERED, null, handledBefore);
          }
          String key = batchKey(streamIndex, open);
          tx.update(
              "INSERT INTO k2_batch_failures (consumer, batch_key, stream_index, failures,"
                  + " last_error, first_failed_at_ms, last_failed_at_ms) VALUES (?, ?, ?, 1, ?, ?, ?)"
                  + " ON CONFLICT (consumer, batch_key) DO UPDATE SET"
                  + " failures = k2_batch_failures.failures + 1, last_error = excluded.last_error,"
                  + " last_failed_at_ms = excluded.last_failed_at_ms",
              consumer,
              key,
              streamIndex,
              error,
              now,
              now);
          long failures =
              tx.queryLong(
                  "SELECT failures FROM k2_batch_failures WHERE consumer = ? AND batch_key = ?",
                  consumer,
                  key);
          if (failures < limit) {
            return new Counted(Verdict.NACK, key, handledBefore);
          }
          deadLetter(tx, consumer, streamIndex, key, open, error, failures, now);
          return new Counted(Verdict.DEAD_LETTERED, key, handledBefore);
        });
  }

  /** The id a dead letter claims a record by: its event id, else its message id (or null). */
  private static String claimId(EventRecord r) {
    return r.decoded() ? r.event().eventId() : r.messageId();
  }

  private static Set<String> processedAmong(Tx tx, String consumer, List<EventRecord> records)
      throws SQLException {
    Set<String> processed = new HashSet<>();
    for (EventRecord r : records) {
      String id = claimId(r);
      if (id != null
          && tx.queryLong(
                  "SELECT COUNT(*) FROM processed_events WHERE consumer = ? AND event_id = ?",
                  consumer,
                  id)
              > 0) {
        processed.add(id);
      }
    }
    return processed;
  }

  private void deadLetter(
      Tx tx,
      String consumer,
      int streamIndex,
      String key,
      List<EventRecord> failed,
      String error,
      long failures,
      long now)
      throws SQLException {
    ObjectNode description = JSON.createObjectNode();
    description.put("consumer", consumer);
    description.put("stream", EventStreams.streamName(streamIndex));
    description.put("batchKey", key);
    ArrayNode records = description.putArray("records");
    List<String> ids = new ArrayList<>();
    String projectId = null;
    for (EventRecord r : failed) {
      ObjectNode row = records.addObject();
      row.put("streamSequence", r.streamSequence());
      row.put("messageId", r.messageId());
      if (r.decoded()) {
        row.put("eventId", r.event().eventId());
        row.put("eventType", r.event().eventType().wireName());
        ids.add(r.event().eventId());
        projectId = projectId == null ? r.event().projectId() : projectId;
      } else {
        row.put("decodeError", r.decodeError().getMessage());
        if (r.messageId() != null) {
          ids.add(r.messageId());
        }
      }
    }
    tx.update(
        tx.dialect()
            .insertIgnore(
                "dead_letters",
                "command_id",
                "kind",
                "command",
                "reason",
                "delivery_count",
                "project_id",
                "created_at_ms"),
        "batch:" + consumer + ":" + key,
        EVENT_BATCH,
        description.toString(),
        error,
        failures,
        projectId,
        now);
    claims.claimEvents(tx, streamIndex, consumer, ids);
  }
}
