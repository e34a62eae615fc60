package org.rhumbatron.lifecycle;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.rhumbatron.lifecycle.candidates.CandidateState;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Placeholders;
import org.rhumbatron.platform.db.RowMapper;

/**
 * The lifecycle tables as a whole run left them: what the demo workload and the benchmarks count
 * and time, across Projects, outside any write transaction.
 */
public final class RunReads {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final TypeReference<List<String>> STRINGS = new TypeReference<>() {};

  /** A Task's dependencies and when it ended (0 while it has not). */
  public record TaskEnd(String taskId, List<String> dependsOn, long endedAtMs) {}

  /** A Change's state, when it was created and when it ended (0 while it has not). */
  public record ChangeTimes(String changeId, ChangeState state, long createdAtMs, long endedAtMs) {}

  private final Database database;

  public RunReads(Database database) {
    this.database = database;
  }

  /** The number of Changes in each state that has any, in the order of the stored names. */
  public Map<ChangeState, Long> changesByState() {
    Map<ChangeState, Long> byState = new LinkedHashMap<>();
    database.read(
        tx ->
            tx.query(
                "SELECT state, COUNT(*) FROM changes GROUP BY state",
                rs -> byState.put(ChangeState.fromDb(rs.getString(1)), rs.getLong(2))));
    Map<ChangeState, Long> ordered = new LinkedHashMap<>();
    byState.entrySet().stream()
        .sorted(Map.Entry.comparingByKey(Comparator.comparing(ChangeState::dbName)))
        .forEach(e -> ordered.put(e.getKey(), e.getValue()));
    return ordered;
  }

  /** The number of Changes in {@code state}. */
  public long changeCount(ChangeState state) {
    return database.read(
        tx -> tx.queryLong("SELECT COUNT(*) FROM changes WHERE state = ?", state.dbName()));
  }

  /** The number of Changes that ended, whatever their end. */
  public long changesEnded() {
    return database.read(
        tx ->
            tx.queryLong(
                "SELECT COUNT(*) FROM changes WHERE state NOT IN ("
                    + Placeholders.of(ChangeState.OPEN_STATES)
                    + ")",
                StoredStates.dbNames(ChangeState.OPEN_STATES).toArray()));
  }

  /** The Changes in {@code state}, oldest first. */
  public List<String> changeIds(ChangeState state) {
    return database.read(
        tx ->
            tx.query(
                "SELECT change_id FROM changes WHERE state = ? ORDER BY created_at_ms, change_id",
                rs -> rs.getString(1),
                state.dbName()));
  }

  /** The stale Candidates of the Projects. */
  public long staleCandidates(Collection<String> projectIds) {
    List<Object> args = new ArrayList<>();
    args.add(CandidateState.STALE.dbName());
    args.addAll(projectIds);
    return database.read(
        tx ->
            tx.queryLong(
                "SELECT COUNT(*) FROM candidates WHERE state = ? AND project_id IN "
                    + in(projectIds),
                args.toArray()));
  }

  /** The Tasks of the Projects. */
  public List<TaskEnd> taskEnds(Collection<String> projectIds) {
    return ofProjects(
        "SELECT task_id, depends_on, ended_at_ms FROM tasks",
        rs -> new TaskEnd(rs.getString(1), strings(rs.getString(2)), rs.getLong(3)),
        projectIds);
  }

  /** The Changes of the Projects. */
  public List<ChangeTimes> changeTimes(Collection<String> projectIds) {
    return ofProjects(
        "SELECT change_id, state, created_at_ms, ended_at_ms FROM changes",
        rs ->
            new ChangeTimes(
                rs.getString(1), ChangeState.fromDb(rs.getString(2)), rs.getLong(3), rs.getLong(4)),
        projectIds);
  }

  /** The rows of {@code select} (a table's, no WHERE yet) whose project is one of those. */
  private <T> List<T> ofProjects(String select, RowMapper<T> row, Collection<String> projectIds) {
    return database.read(
        tx ->
            tx.query(select + " WHERE project_id IN " + in(projectIds), row, projectIds.toArray()));
  }

  /** {@code (?, ?, ...)}, one placeholder for each id. */
  private static String in(Collection<String> ids) {
    if (ids.isEmpty()) {
      throw new IllegalArgumentException("no project ids");
    }
    return "(" + Placeholders.of(ids) + ")";
  }

  private static List<String> strings(String json) {
    try {
      return json == null ? List.of() : JSON.readValue(json, STRINGS);
    } catch (IOException e) {
      throw new IllegalStateException("not a JSON array of strings: " + json, e);
    }
  }
}
