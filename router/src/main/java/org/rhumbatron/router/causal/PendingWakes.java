package org.rhumbatron.router.causal;

import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.rhumbatron.lifecycle.LifecycleIds;
import org.rhumbatron.platform.db.Placeholders;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;

/**
 * The wakes of a Task attempt that no wake consumer handled yet: the last overlap wake this router
 * sent, or else, while the Task is only assigned, the dispatcher's wake that hands it out. A wake
 * is handled once its {@code agent.woken} row is in the outbox (its id derives from the command, so
 * one indexed read tells). While a Task attempt's wake waits in the queue, a further overlap wake
 * of it is a repeat: the Agent handles the pending one after the later Event was committed, so it
 * sees that Event too. A wake pending longer than {@code window} (in a retry, dead lettered) no
 * longer holds the next one back.
 *
 * <p>Kept in memory: after a restart, or on another core, the next wake simply goes out, and the
 * wake consumer's relevance check still judges every wake.
 */
final class PendingWakes {
  /** A wake sent: its command and Task, and when. */
  private record Sent(String commandId, String changeId, String taskId, long sentAtMillis) {}

  private final Clock clock;
  private final Duration window;
  // By Task attempt, oldest send first: the expired ones are dropped from the head.
  private final LinkedHashMap<String, Sent> byAttempt = new LinkedHashMap<>();

  PendingWakes(Clock clock, Duration window) {
    this.clock = clock;
    this.window = window;
  }

  /**
   * The wakes of {@code wakes} whose Task attempt has another wake pending, read in {@code tx}.
   * {@code assignedAt}: when each Task attempt of {@code wakes} that is assigned, not running, was
   * handed out (by {@link #key}). A wake with the pending one's own command id (a redelivered
   * batch) is never held back.
   */
  Set<String> heldBack(Tx tx, Collection<Command> wakes, Map<String, Long> assignedAt)
      throws SQLException {
    if (window.isZero() || wakes.isEmpty()) {
      return Set.of();
    }
    Map<String, Sent> pendingOf = new HashMap<>(); // by the new wake's command id
    long oldest = clock.millis() - window.toMillis();
    synchronized (this) {
      expire();
      for (Command w : wakes) {
        Sent s = byAttempt.get(key(w));
        Long assigned = assignedAt.get(key(w));
        if (s == null && assigned != null && assigned > oldest) {
          int attempt = w.payload().path("attempt").asInt();
          s =
              new Sent(
                  LifecycleIds.readyWake(w.taskId(), attempt), w.changeId(), w.taskId(), assigned);
        }
        if (s != null && !s.commandId().equals(w.commandId())) {
          pendingOf.put(w.commandId(), s);
        }
      }
    }
    if (pendingOf.isEmpty()) {
      return Set.of();
    }
    Map<String, Sent> byWokenEvent = new HashMap<>();
    for (Sent s : pendingOf.values()) {
      byWokenEvent.put(
          StableIds.stableEventId(s.changeId(), EventType.AGENT_WOKEN, s.taskId(), s.commandId()),
          s);
    }
    List<Object> ids = new ArrayList<>(byWokenEvent.keySet());
    Set<String> handled =
        new HashSet<>(
            tx.query(
                "SELECT event_id FROM outbox WHERE event_id IN (" + Placeholders.of(ids) + ")",
                rs -> rs.getString(1),
                ids.toArray()));
    Set<String> handledCommands = new HashSet<>();
    handled.forEach(id -> handledCommands.add(byWokenEvent.get(id).commandId()));
    Set<String> out = new HashSet<>();
    pendingOf.forEach(
        (wakeId, s) -> {
          if (!handledCommands.contains(s.commandId())) {
            out.add(wakeId);
          }
        });
    return out;
  }

  /** The wakes that went out (after the cap): each is its Task attempt's pending wake now. */
  synchronized void sent(Collection<Command> wakes) {
    if (window.isZero()) {
      return;
    }
    long now = clock.millis();
    for (Command w : wakes) {
      String k = key(w);
      byAttempt.remove(k); // re-inserted last: the map stays in send order
      byAttempt.put(k, new Sent(w.commandId(), w.changeId(), w.taskId(), now));
    }
    expire();
  }

  /** Task attempts with a wake tracked (for tests). */
  synchronized int size() {
    return byAttempt.size();
  }

  private void expire() {
    long oldest = clock.millis() - window.toMillis();
    for (Iterator<Sent> it = byAttempt.values().iterator(); it.hasNext(); ) {
      if (it.next().sentAtMillis() > oldest) {
        return;
      }
      it.remove();
    }
  }

  static String key(Command wake) {
    return key(wake.taskId(), wake.payload().path("attempt").asInt());
  }

  static String key(String taskId, int attempt) {
    return taskId + "#" + attempt;
  }
}
