package org.rhumbatron.checker;

import static org.rhumbatron.checker.HistoryChecker.CANDIDATE_COMPOSED_TWICE;
import static org.rhumbatron.checker.HistoryChecker.CHANGE_ENDED_TWICE;
import static org.rhumbatron.checker.HistoryChecker.RELEASE_TWICE;
import static org.rhumbatron.checker.HistoryChecker.TASK_COMPLETED_TWICE;
import static org.rhumbatron.checker.HistoryChecker.VERIFICATION_TWICE;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;

/**
 * Each effect (a Task's completion, a Candidate, a verification, a release, a Change's end) once.
 */
final class EffectsOnce {
  private static final Set<EventType> CHANGE_ENDS =
      Set.of(
          EventType.CHANGE_COMPLETED,
          EventType.CHANGE_FAILED,
          EventType.CHANGE_CANCELLED,
          EventType.CHANGE_DECLINED,
          EventType.CHANGE_NOT_SELECTED);

  private EffectsOnce() {}

  /** Distinct Events that record one effect: each effect's key must have one. */
  static void check(CheckReport report, List<Event> events) {
    Map<String, Set<String>> byEffect = new HashMap<>();
    for (Event e : events) {
      String effect = effectKey(e);
      if (effect != null) {
        byEffect.computeIfAbsent(effect, k -> new HashSet<>()).add(e.eventId());
      }
    }
    byEffect.forEach(
        (key, ids) -> {
          if (ids.size() > 1) {
            int colon = key.indexOf('|');
            report.violation(key.substring(0, colon), key.substring(colon + 1) + " " + ids);
          }
        });
    report.total("events_checked_for_effects", events.size());
  }

  /** {@code violation|id} of the one effect {@code e} records, or null. */
  static String effectKey(Event e) {
    JsonNode p = e.payload();
    EventType t = e.eventType();
    if (t == EventType.TASK_COMPLETED) {
      return TASK_COMPLETED_TWICE + "|" + e.taskId() + " attempt " + p.path("attempt").asText("?");
    }
    if (t == EventType.CANDIDATE_CREATED) {
      return CANDIDATE_COMPOSED_TWICE + "|" + p.path("candidateId").asText(e.changeId());
    }
    if (t == EventType.CANDIDATE_VERIFIED || t == EventType.CANDIDATE_REJECTED) {
      return VERIFICATION_TWICE + "|" + p.path("candidateId").asText(e.changeId());
    }
    if (t == EventType.RELEASE_COMPLETED || t == EventType.RELEASE_FAILED) {
      return RELEASE_TWICE + "|" + p.path("releaseId").asText(e.changeId()) + " " + t.wireName();
    }
    if (CHANGE_ENDS.contains(t)) {
      return CHANGE_ENDED_TWICE + "|" + e.changeId();
    }
    return null;
  }
}
