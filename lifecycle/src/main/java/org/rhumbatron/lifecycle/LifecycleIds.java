package org.rhumbatron.lifecycle;

import java.util.HexFormat;
import org.rhumbatron.protocol.Sha256;
import org.rhumbatron.protocol.StableIds;

/**
 * The lifecycle's derived ids. A Change id derives from {@code (project_id, client_request_id)}, so
 * a repeated create lands on the same shard and the same row; a Task's from its Change and key; an
 * Agent's from its Task and attempt, so each attempt has its own Agent and a late wake of an
 * earlier attempt is stale.
 */
public final class LifecycleIds {
  private static final HexFormat HEX = HexFormat.of();

  private LifecycleIds() {}

  /** {@code chg_} + the first 16 bytes of SHA-256 over {@code projectId US clientRequestId}. */
  public static String changeId(String projectId, String clientRequestId) {
    return "chg_" + hash(projectId + StableIds.UNIT_SEPARATOR + clientRequestId, 16);
  }

  /** {@code <changeId>:<key>}. */
  public static String taskId(String changeId, String key) {
    return changeId + ":" + key;
  }

  /** {@code agt_} + the first 8 bytes of SHA-256 over {@code taskId US attempt}. */
  public static String agentId(String taskId, int attempt) {
    return "agt_" + hash(taskId + StableIds.UNIT_SEPARATOR + attempt, 8);
  }

  /**
   * The wake change.dispatch sends for a Task it admitted: {@code cmd_<task>_ready} (the seed's
   * key) for the first attempt, {@code cmd_<task>_ready_a<n>} for a later one, whose first wake may
   * still be inside the queue's duplicate window.
   */
  public static String readyWake(String taskId, int attempt) {
    String first = StableIds.readyWake(taskId);
    return attempt <= 1 ? first : first + "_a" + attempt;
  }

  /** The changeset of a Task attempt: {@code cs_} + 8 bytes of SHA-256 over task and attempt. */
  public static String changesetId(String taskId, int attempt) {
    return "cs_" + hash(taskId + StableIds.UNIT_SEPARATOR + attempt, 8);
  }

  /** The stable-id key of a Task Event of {@code attempt}: none for the first, {@code a<n>}. */
  public static String attemptKey(int attempt) {
    return attempt <= 1 ? null : "a" + attempt;
  }

  private static String hash(String text, int bytes) {
    return Sha256.hex(text, bytes);
  }
}
