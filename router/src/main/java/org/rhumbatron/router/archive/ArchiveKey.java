package org.rhumbatron.router.archive;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.protocol.Sha256;

/**
 * The seed's archive key {@code
 * events/<yyyy>/<mm>/<dd>/stream-<NN>/part-<firstMs>-<hash>.ndjson.gz}.
 *
 * <p>Everything in it is fixed by the batch's content, so a redelivery of the same batch overwrites
 * the same object: the date and {@code firstMs} are the UTC timestamp of the batch's first Event
 * (when its writer committed it); {@code hash} is the first 16 hex digits of SHA-256 over the
 * batch's record ids in stream order, each followed by {@code \n}. A record's id is its Event id,
 * or for one that did not decode its {@code Nats-Msg-Id}, or {@code seq:<stream sequence>}. A batch
 * with no decodable Event takes the time the stream stored its first record.
 *
 * <p>With several cores the hash also covers the epoch of the stream's duty the batch was archived
 * under (a line {@code epoch:<n>} after the ids; none at epoch 0, one core): two nodes that archive
 * the same records never share a key, so the one whose claims are fenced deletes only its own
 * object.
 */
public final class ArchiveKey {
  /** Every archive object's key starts with this. */
  public static final String PREFIX = "events/";

  private static final HexFormat HEX = HexFormat.of();

  private ArchiveKey() {}

  /** The key of {@code records} (a non-empty batch of stream {@code streamIndex}) on one core. */
  public static String of(int streamIndex, List<EventRecord> records) {
    return of(streamIndex, records, 0);
  }

  /** The key of {@code records} archived under {@code epoch} of the stream's duty. */
  public static String of(int streamIndex, List<EventRecord> records, long epoch) {
    if (records.isEmpty()) {
      throw new IllegalArgumentException("an empty batch has no archive key");
    }
    List<String> ids = new ArrayList<>(records.size() + 1);
    records.forEach(r -> ids.add(id(r)));
    if (epoch != 0) {
      ids.add("epoch:" + epoch);
    }
    return key(streamIndex, firstTime(records), ids);
  }

  /** The key from its parts; {@code ids} in stream order. */
  public static String key(int streamIndex, Instant first, List<String> ids) {
    ZonedDateTime day = first.atZone(ZoneOffset.UTC);
    return String.format(
        "%s%04d/%02d/%02d/stream-%02d/part-%d-%s.ndjson.gz",
        PREFIX,
        day.getYear(),
        day.getMonthValue(),
        day.getDayOfMonth(),
        streamIndex,
        first.toEpochMilli(),
        hash(ids));
  }

  /** First 16 hex digits of SHA-256 over each id followed by a newline. */
  public static String hash(List<String> ids) {
    MessageDigest sha256 = Sha256.digest();
    for (String id : ids) {
      sha256.update(id.getBytes(StandardCharsets.UTF_8));
      sha256.update((byte) '\n');
    }
    return HEX.formatHex(sha256.digest()).substring(0, 16);
  }

  /** The id a record has in the hash (and in a malformed record's archive line). */
  static String id(EventRecord record) {
    if (record.decoded()) {
      return record.event().eventId();
    }
    String msgId = record.messageId();
    return msgId != null ? msgId : "seq:" + record.streamSequence();
  }

  private static Instant firstTime(List<EventRecord> records) {
    for (EventRecord r : records) {
      if (r.decoded()) {
        return r.event().timestamp();
      }
    }
    return records.get(0).storedAt();
  }
}
