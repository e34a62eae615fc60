package org.rhumbatron.router.causal;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.rhumbatron.lifecycle.HeldWork;
import org.rhumbatron.lifecycle.LifecycleIds;
import org.rhumbatron.lifecycle.tasks.TaskState;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;

/** The wakes of a batch that would tell their Agent nothing, read in the claiming transaction. */
final class StaleWakes {
  private StaleWakes() {}

  /** The Task attempts a batch's wakes are for, as the claiming transaction reads them. */
  record Held(Set<String> stale, Map<String, Long> assignedAt) {}

  /**
   * Which wakes among {@code out} are stale: their Task its Agent no longer holds for the wake's
   * attempt, or its Change is not open (the wake consumer's relevance check, read now); and when
   * each held Task attempt that is assigned, not running yet, was handed out.
   */
  static Held held(Tx tx, List<Command> out) throws SQLException {
    List<Command> wakes =
        out.stream().filter(c -> c.commandType() == CommandType.AGENT_WAKE).toList();
    if (wakes.isEmpty()) {
      return new Held(Set.of(), Map.of());
    }
    Set<String> taskIds = new LinkedHashSet<>(wakes.stream().map(Command::taskId).toList());
    Map<String, Long> assignedAt = new HashMap<>();
    Set<String> held = new HashSet<>();
    for (HeldWork.HeldAttempt a : HeldWork.inOpenChanges(tx, taskIds)) {
      held.add(heldKey(a.taskId(), a.agentId(), a.attempt()));
      if (a.state() == TaskState.ASSIGNED) {
        assignedAt.put(PendingWakes.key(a.taskId(), a.attempt()), a.updatedAtMs());
      }
    }
    Set<String> stale = new HashSet<>();
    for (Command w : wakes) {
      String agent = w.payload().path("agentId").asText();
      if (!held.contains(heldKey(w.taskId(), agent, w.payload().path("attempt").asInt()))) {
        stale.add(w.commandId());
      }
    }
    return new Held(stale, assignedAt);
  }

  /**
   * The overlap wakes among {@code wakes} whose Task attempt already proposed its changeset: an
   * attempt proposes one (its id derives from the Task and attempt), so nothing a wake tells the
   * Agent changes it; overlapping changesets are the integration's to compose.
   */
  static Set<String> proposed(Tx tx, List<Command> wakes) throws SQLException {
    if (wakes.isEmpty()) {
      return Set.of();
    }
    Map<String, List<String>> byChangeset = new HashMap<>();
    for (Command w : wakes) {
      byChangeset
          .computeIfAbsent(
              LifecycleIds.changesetId(w.taskId(), w.payload().path("attempt").asInt()),
              k -> new ArrayList<>())
          .add(w.commandId());
    }
    Set<String> out = new HashSet<>();
    for (String id : HeldWork.proposed(tx, byChangeset.keySet())) {
      out.addAll(byChangeset.get(id));
    }
    return out;
  }

  private static String heldKey(String taskId, String agentId, int attempt) {
    return taskId + "#" + agentId + "#" + attempt;
  }
}
