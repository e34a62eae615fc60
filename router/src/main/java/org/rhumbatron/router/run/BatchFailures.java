package org.rhumbatron.router.run;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Placeholders;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.router.claims.EventClaims;

/**
 * Counts failed deliveries in {@code k2_batch_failures (consumer, batch_key)}, one key per failed
 * record. Below the limit (5) the caller nacks; the records of a delivery that reach the limit
 * become one {@code dead_letters} row (kind {@code event_batch}, which an operator can only
 * dismiss) and are marked processed, in the same transaction, so the caller acks them and the
 * stream flows on. Records that did not decode skip the count: their first failure is their dead
 * letter ({@link #deadLetterMalformed}). A failed record the consumer already marked processed
 * (dead-lettered before, its ack lost) is only acked again: it neither counts nor keys the batch,
 * so the records that came with it get a dead letter of their own.
 */
public final class BatchFailures {
  /** {@code dead_letters.kind} of a skipped event batch. */
  public static final String EVENT_BATCH = "event_batch";

  private static final ObjectMapper JSON = new ObjectMapper();
  // Keys per lookup: a fetch of router.fetch-batch (100) records takes one.
  private static final int LOOKUP_CHUNK = 100;

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
   * One failure counted: the caller acks {@code handledBefore} and {@code deadLettered} at once and
   * nacks {@code nacked}. {@code deadLetterKey} keys the dead letter written for {@code
   * deadLettered} (null when none was).
   */
  public record Counted(
      List<EventRecord> deadLettered,
      String deadLetterKey,
      List<EventRecord> nacked,
      List<EventRecord> handledBefore) {
    /** NACK while any record is nacked; else every failed record is dealt with. */
    public Verdict verdict() {
      return nacked.isEmpty() ? Verdict.DEAD_LETTERED : Verdict.NACK;
    }
  }

  /**
   * The key a failed record counts under: its event id, or when it did not decode its stream
   * sequence and a digest of its bytes (a stream that lost its tail hands a sequence out again, and
   * the digest keeps the new record's failures apart from the old one's).
   */
  public static String recordKey(int streamIndex, EventRecord r) {
    return r.decoded()
        ? r.event().eventId()
        : EventStreams.streamName(streamIndex) + ":" + r.streamSequence() + ":" + digest(r.data());
  }

  private static String digest(byte[] data) {
    byte[] d = org.rhumbatron.protocol.Sha256.of(data == null ? new byte[0] : data);
    return java.util.HexFormat.of().formatHex(d, 0, 8);
  }

  /**
   * Counts one failure of each of {@code failed}; those at the limit become one dead letter (see
   * the class). Each record counts under its own key: redeliveries regroup failed records (they
   * come due one by one, and a fetch takes whatever is due), and a count per group would start
   * again with every new grouping, so a poison record could be nacked forever.
   */
  public Counted recordFailure(
      Subscription subscription, int streamIndex, List<EventRecord> failed, String error) {
    return settle(
        subscription,
        streamIndex,
        failed,
        (tx, consumer, now, split) -> {
          List<EventRecord> handledBefore = split.handledBefore();
          Map<String, List<EventRecord>> open = new LinkedHashMap<>();
          for (EventRecord r : split.open()) {
            open.computeIfAbsent(recordKey(streamIndex, r), k -> new ArrayList<>()).add(r);
          }
          if (open.isEmpty()) {
            return new Counted(List.of(), null, List.of(), handledBefore);
          }
          List<Object[]> rows = new ArrayList<>();
          for (String key : open.keySet()) {
            rows.add(new Object[] {consumer, key, streamIndex, error, now, now});
          }
          tx.updateBatch(
              "INSERT INTO k2_batch_failures (consumer, batch_key, stream_index, failures,"
                  + " last_error, first_failed_at_ms, last_failed_at_ms) VALUES (?, ?, ?, 1, ?, ?, ?)"
                  + " ON CONFLICT (consumer, batch_key) DO UPDATE SET"
                  + " failures = k2_batch_failures.failures + 1, last_error = excluded.last_error,"
                  + " last_failed_at_ms = excluded.last_failed_at_ms",
              rows);
          List<EventRecord> reached = new ArrayList<>();
          List<EventRecord> nacked = new ArrayList<>();
          String deadLetterKey = null;
          long most = 0;
          Map<String, Long> counts = failuresOf(tx, consumer, List.copyOf(open.keySet()));
          for (Map.Entry<String, List<EventRecord>> e : open.entrySet()) {
            long failures = counts.get(e.getKey()); // the upsert above wrote every key
            if (failures >= limit) {
              deadLetterKey = deadLetterKey == null ? e.getKey() : deadLetterKey;
              most = Math.max(most, failures);
              reached.addAll(e.getValue());
            } else {
              nacked.addAll(e.getValue());
            }
          }
          if (!reached.isEmpty()) {
            deadLetter(tx, consumer, streamIndex, deadLetterKey, reached, error, most, now);
          }
          return new Counted(reached, deadLetterKey, nacked, handledBefore);
        });
  }

  /**
   * Dead-letters {@code malformed} (records that did not decode) on their first failure, as one
   * dead letter whose reason names each decode error: the limit is for effects that may succeed
   * later, and a record that cannot decode never will. Those the consumer dead-lettered before (an
   * ack lost) come back as {@code handledBefore}; nothing is counted or nacked.
   */
  public Counted deadLetterMalformed(
      Subscription subscription, int streamIndex, List<EventRecord> malformed) {
    if (malformed.stream().anyMatch(EventRecord::decoded)) {
      throw new IllegalArgumentException("only records that did not decode are malformed");
    }
    return settle(
        subscription,
        streamIndex,
        malformed,
        (tx, consumer, now, split) -> {
          List<EventRecord> fresh = split.open();
          if (fresh.isEmpty()) {
            return new Counted(List.of(), null, List.of(), split.handledBefore());
          }
          String key = recordKey(streamIndex, fresh.get(0));
          String reason =
              ClaimingTemplate.summary(
                  fresh.stream().map(BatchFailures::malformedReason).toList(), "malformed record");
          deadLetter(tx, consumer, streamIndex, key, fresh, reason, 1, now);
          return new Counted(fresh, key, List.of(), split.handledBefore());
        });
  }

  /** Why {@code r}, which did not decode, is dead-lettered: where it is and its decode error. */
  static String malformedReason(EventRecord r) {
    return "malformed envelope at stream sequence "
        + r.streamSequence()
        + (r.messageId() == null ? "" : " (" + r.messageId() + ")")
        + ": "
        + r.decodeError().getMessage();
  }

  /** Failed records split into those the consumer dead-lettered before and the open ones. */
  private record Split(List<EventRecord> handledBefore, List<EventRecord> open) {}

  /** What is done with the open records of a split, in its transaction. */
  @FunctionalInterface
  private interface Settle {
    Counted apply(Tx tx, String consumer, long now, Split split) throws SQLException;
  }

  /**
   * Splits {@code failed} and runs {@code settle} on it in one transaction, fenced on the stream's
   * holder: a failure counts, and a dead letter is written, only there.
   */
  private Counted settle(
      Subscription subscription, int streamIndex, List<EventRecord> failed, Settle settle) {
    String consumer = subscription.durableName();
    long now = clock.millis();
    return database.inTransaction(
        tx -> {
          claims.fence(tx, streamIndex);
          Set<String> processed = processedAmong(tx, consumer, failed);
          List<EventRecord> handledBefore = new ArrayList<>();
          List<EventRecord> open = new ArrayList<>();
          for (EventRecord r : failed) {
            String id = claimId(r);
            (id != null && processed.contains(id) ? handledBefore : open).add(r);
          }
          return settle.apply(tx, consumer, now, new Split(handledBefore, open));
        });
  }

  /** The id a dead letter claims a record by: its event id, else its message id (or null). */
  private static String claimId(EventRecord r) {
    return r.decoded() ? r.event().eventId() : r.messageId();
  }

  /** The claim ids among {@code records} that {@code consumer} marked processed. */
  private Set<String> processedAmong(Tx tx, String consumer, List<EventRecord> records)
      throws SQLException {
    List<String> ids =
        records.stream().map(BatchFailures::claimId).filter(Objects::nonNull).distinct().toList();
    return claims.claimedAmong(tx, consumer, ids);
  }

  /** The failure counts of {@code keys}: one query per {@value #LOOKUP_CHUNK} keys. */
  private static Map<String, Long> failuresOf(Tx tx, String consumer, List<String> keys)
      throws SQLException {
    Map<String, Long> failures = new HashMap<>();
    for (int from = 0; from < keys.size(); from += LOOKUP_CHUNK) {
      List<String> chunk = keys.subList(from, Math.min(keys.size(), from + LOOKUP_CHUNK));
      List<Object> args = new ArrayList<>(chunk.size() + 1);
      args.add(consumer);
      args.addAll(chunk);
      tx.query(
          "SELECT batch_key, failures FROM k2_batch_failures WHERE consumer = ? AND batch_key IN ("
              + Placeholders.of(chunk)
              + ")",
          rs -> failures.put(rs.getString(1), rs.getLong(2)),
          args.toArray());
    }
    return failures;
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
    description.put("subject", EventStreams.streamSubject(streamIndex));
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
        putData(row, r.data());
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

  /**
   * The bytes of a record that did not decode, so its dead letter keeps them past the stream's
   * retention: as text when they are UTF-8, else in base64.
   */
  private static void putData(ObjectNode row, byte[] data) {
    try {
      row.put(
          "data",
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(data))
              .toString());
    } catch (CharacterCodingException notUtf8) {
      row.put("dataBase64", Base64.getEncoder().encodeToString(data));
    }
  }
}
