package org.rhumbatron.protocol;

import java.time.Instant;
import java.util.HexFormat;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The stable keys of the retry boundaries (seed: "Idempotency and dedupe"). A retry that computes
 * the same key writes the same Event or sends the same Command again, and the dedupe at the next
 * boundary drops the repeat.
 */
public final class StableIds {

  /** Joins the parts of a stable Event id; ids and type names cannot contain it. */
  public static final char UNIT_SEPARATOR = '\u001F';

  private static final HexFormat HEX = HexFormat.of();

  private StableIds() {}

  /**
   * The deterministic id of a Change Event, so that a retried Workflow step writes the same id and
   * the outbox ignores the repeat.
   *
   * <p>The id is {@code "evt_"} + the lowercase hex of the first 16 bytes of SHA-256 over the UTF-8
   * bytes of
   *
   * <pre>changeId US eventType.wireName() US taskId US key</pre>
   *
   * where US is the unit separator U+001F and a null {@code taskId} or {@code key} is the empty
   * string. There are always four parts and three separators. No part can contain U+001F (ids and
   * type names cannot by their format; a key that does is rejected), so the joining is unambiguous.
   * An empty key is the same as no key. Example: {@code ("chg_1", TASK_COMPLETED, "task_1", null)}
   * hashes {@code chg_1␟task.completed␟task_1␟} and gives {@code
   * evt_01a80d48c3eb988ebf7074ef790b8bf0}.
   *
   * @param key optional discriminator when one Task has several Events of one type, or null
   */
  public static String stableEventId(
      String changeId, EventType eventType, String taskId, String key) {
    Check.id("/changeId", changeId);
    Check.required("/eventType", eventType);
    Check.optionalId("/taskId", taskId);
    if (key != null && key.indexOf(UNIT_SEPARATOR) >= 0) {
      throw new EnvelopeException(
          "key", EnvelopeException.PATTERN, "a stable-id key must not contain U+001F");
    }
    String joined =
        changeId
            + UNIT_SEPARATOR
            + eventType.wireName()
            + UNIT_SEPARATOR
            + (taskId == null ? "" : taskId)
            + UNIT_SEPARATOR
            + (key == null ? "" : key);
    byte[] digest = Sha256.of(joined);
    return "evt_" + HEX.formatHex(digest, 0, 16);
  }

  /** {@link #stableEventId(String, EventType, String, String)} without a key. */
  public static String stableEventId(String changeId, EventType eventType, String taskId) {
    return stableEventId(changeId, eventType, taskId, null);
  }

  /**
   * An id for an Event of an actor's own transaction (e.g. canonical.advanced, claim.acquired):
   * {@code "evt_"} + the 32 hex digits of a random UUID. The transaction runs once, so a retry of
   * the publish keeps the id the row already holds.
   */
  public static String randomEventId() {
    return randomEventId(UUID::randomUUID);
  }

  /**
   * {@link #randomEventId()} whose first 12 hex digits are the milliseconds of {@code at} (the
   * caller's clock): a UUID of version 7 (RFC 9562), 74 random bits after the time. Ids made close
   * in time sort close together, so the outbox's {@code event_id UNIQUE} index takes them at its
   * right edge instead of on a random page each: fewer pages written per commit.
   */
  public static String randomEventId(Instant at) {
    long millis = Check.required("at", at).toEpochMilli();
    return randomEventId(
        () -> {
          UUID random = UUID.randomUUID(); // version 4: 122 random bits, the variant already IETF
          long msb = (millis << 16) | 0x7000L | (random.getMostSignificantBits() & 0x0FFFL);
          return new UUID(msb, random.getLeastSignificantBits());
        });
  }

  /** {@link #randomEventId()} with the UUIDs from {@code uuids}, so a test can fix them. */
  public static String randomEventId(Supplier<UUID> uuids) {
    return "evt_" + hex(uuids);
  }

  /** A command id for a command with no natural key: {@code "cmd_"} + 32 hex digits. */
  public static String randomCommandId(Supplier<UUID> uuids) {
    return "cmd_" + hex(uuids);
  }

  /** The wake that change.dispatch sends for a ready Task: {@code cmd_<task>_ready}. */
  public static String readyWake(String taskId) {
    return "cmd_" + Check.id("/taskId", taskId) + "_ready";
  }

  /** The wake that the causal router sends for an Event and a Task: {@code cmd_<event>_<task>}. */
  public static String routerWake(String eventId, String taskId) {
    Check.matching("/eventId", Check.required("/eventId", eventId), IdFormat.EVENT_ID_PATTERN);
    return "cmd_" + eventId + "_" + Check.id("/taskId", taskId);
  }

  /** The verification.start of a Candidate: {@code cmd_<candidate>_verify}. */
  public static String verify(String candidateId) {
    return "cmd_" + Check.id("candidateId", candidateId) + "_verify";
  }

  /** The release.start of a release: {@code cmd_<release>_release}. */
  public static String release(String releaseId) {
    Check.matching("releaseId", Check.required("releaseId", releaseId), IdFormat.REFERENCE_PATTERN);
    return "cmd_" + releaseId + "_release";
  }

  /**
   * The release of a promoted generation, and its Workflow instance id: {@code
   * rel_<project>_<generation>}.
   */
  public static String releaseId(String projectId, long generation) {
    Check.optionalGeneration("/canonicalGeneration", generation);
    return "rel_" + Check.id("/projectId", projectId) + "_" + generation;
  }

  /** The JetStream message id of a command send: {@code <queue>:<commandId>}. */
  public static String commandMessageId(Queue queue, String commandId) {
    Check.required("queue", queue);
    Check.matching(
        "/commandId", Check.required("/commandId", commandId), IdFormat.COMMAND_ID_PATTERN);
    return queue.wireName() + ":" + commandId;
  }

  private static String hex(Supplier<UUID> uuids) {
    UUID uuid = Check.required("uuid", uuids.get());
    return HEX.toHexDigits(uuid.getMostSignificantBits())
        + HEX.toHexDigits(uuid.getLeastSignificantBits());
  }
}
