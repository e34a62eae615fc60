package org.rhumbatron.lifecycle.claims;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.rhumbatron.lifecycle.StoredStates;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.lifecycle.tasks.TaskState;
import org.rhumbatron.platform.db.Placeholders;
import org.rhumbatron.platform.db.Tx;

/**
 * The resource scopes of the active Agents of a project (the seed's "active agent": one holding an
 * assigned or running Task), indexed by key so the causal router finds the Agents an Event's keys
 * overlap without reading every Agent of the project. A Task's scopes enter when its Agent is
 * admitted, an intent's key when the Agent declares it; they leave when the attempt or the Change
 * ends. Readers join the held Task, so a row an ended attempt left behind matches nothing.
 */
public final class ActiveScopes {

  /** How two resource keys overlap; the seed's exact match and prefix-only overlap. */
  public enum Overlap {
    EXACT,
    PREFIX
  }

  /**
   * An active Agent whose scope overlaps one of the Event's keys, with the strongest overlap found
   * (exact over prefix) and the two keys that gave it.
   */
  public record Match(
      String taskId,
      String changeId,
      String agentId,
      int attempt,
      String taskTitle,
      Overlap overlap,
      String eventKey,
      String agentKey) {}

  private ActiveScopes() {}

  /**
   * Whether {@code a} and {@code b} overlap: {@code EXACT} when equal, {@code PREFIX} when one is a
   * path prefix of the other (either way), null when neither.
   */
  public static Overlap between(String a, String b) {
    if (a.equals(b)) {
      return Overlap.EXACT;
    }
    return isPathPrefix(a, b) || isPathPrefix(b, a) ? Overlap.PREFIX : null;
  }

  /**
   * {@code a} is a path prefix of {@code b}: {@code b} goes on after {@code a} at a path boundary
   * ({@code path:src/} and {@code path:src} of {@code path:src/api/x}, not {@code path:sr}).
   */
  static boolean isPathPrefix(String a, String b) {
    return b.length() > a.length()
        && b.startsWith(a)
        && (a.endsWith("/") || b.charAt(a.length()) == '/');
  }

  /**
   * The active Agents of {@code projectId} whose scopes overlap any of {@code keys}, one per Task,
   * without the Agent {@code exceptAgent} (the Event's own; may be null). Found by key: the equal
   * key and the path prefixes of each key by equality, the keys under it by a range of the index.
   */
  public static List<Match> overlapping(
      Tx tx, String projectId, Collection<String> keys, String exceptAgent) throws SQLException {
    Map<String, Match> byTask = new LinkedHashMap<>();
    for (String key : new LinkedHashSet<>(keys)) {
      Set<String> equalOrAbove = prefixesOf(key);
      equalOrAbove.add(key);
      String low = key.endsWith("/") ? key : key + "/";
      String high = low.substring(0, low.length() - 1) + "0"; // '0' follows '/'
      List<Object> args = new ArrayList<>(StoredStates.dbNames(TaskState.HELD));
      args.add(projectId);
      args.addAll(equalOrAbove);
      args.add(low);
      args.add(high);
      String sql =
          "SELECT s.resource_key, s.task_id, s.change_id, s.agent_id, t.attempts, t.title"
              + " FROM active_scopes s JOIN tasks t ON t.task_id = s.task_id"
              + " AND t.agent_id = s.agent_id AND t.state IN ("
              + Placeholders.of(TaskState.HELD)
              + ")"
              + " WHERE s.project_id = ? AND (s.resource_key IN ("
              + Placeholders.of(equalOrAbove)
              + ") OR (s.resource_key >= ? AND s.resource_key < ?))";
      List<Match> rows =
          tx.query(
              sql,
              rs -> {
                String agentKey = rs.getString(1);
                Overlap overlap = between(key, agentKey);
                return overlap == null
                    ? null
                    : new Match(
                        rs.getString(2),
                        rs.getString(3),
                        rs.getString(4),
                        rs.getInt(5),
                        rs.getString(6),
                        overlap,
                        key,
                        agentKey);
              },
              args.toArray());
      for (Match m : rows) {
        if (m == null || m.agentId().equals(exceptAgent)) {
          continue;
        }
        byTask.merge(
            m.taskId(),
            m,
            (was, now) ->
                was.overlap() == Overlap.EXACT || now.overlap() != Overlap.EXACT ? was : now);
      }
    }
    return List.copyOf(byTask.values());
  }

  /** The keys that are path prefixes of {@code key}: up to each {@code /}, with and without it. */
  private static Set<String> prefixesOf(String key) {
    Set<String> out = new LinkedHashSet<>();
    for (int i = key.indexOf('/'); i >= 0 && i < key.length() - 1; i = key.indexOf('/', i + 1)) {
      if (i > 0) {
        out.add(key.substring(0, i));
      }
      out.add(key.substring(0, i + 1));
    }
    if (key.endsWith("/") && key.length() > 1) {
      out.add(key.substring(0, key.length() - 1));
    }
    return out;
  }

  /** The Task's scopes, when its Agent is admitted. */
  public static void admit(
      Tx tx, String projectId, String changeId, String taskId, String agentId, List<String> keys)
      throws SQLException {
    List<Object[]> rows = new ArrayList<>(keys.size());
    for (String key : new LinkedHashSet<>(keys)) {
      rows.add(new Object[] {projectId, key, taskId, agentId, changeId});
    }
    if (!rows.isEmpty()) {
      tx.updateBatch(INSERT, rows);
    }
  }

  /** The key of an intent the Agent declared. */
  static void declare(Tx tx, TaskRef ref, String key) throws SQLException {
    tx.update(INSERT, ref.projectId(), key, ref.taskId(), ref.agentId(), ref.changeId());
  }

  /** The Task's attempt ended (completed, failed): its Agent is no longer active. */
  public static void endTask(Tx tx, String taskId) throws SQLException {
    tx.update("DELETE FROM active_scopes WHERE task_id = ?", taskId);
  }

  /** The Change ended or went back to work: none of its Agents is active. */
  public static void endChange(Tx tx, String changeId) throws SQLException {
    tx.update("DELETE FROM active_scopes WHERE change_id = ?", changeId);
  }

  private static final String INSERT =
      "INSERT INTO active_scopes (project_id, resource_key, task_id, agent_id, change_id)"
          + " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING";
}
