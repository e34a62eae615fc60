package org.rhumbatron.workload;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.rhumbatron.lifecycle.LifecycleIds;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;

/**
 * Checks the Events of one Change, in stream order, against the lifecycle: each Event once;
 * change.created first; each Task through pending → ready → assigned → running → completed |
 * failed, a failed attempt back to ready for the next; ready only once every dependency completed;
 * at most {@code agents} Tasks held (assigned or running) at any point; verification only once
 * every Task completed, and no Task Event after it. It is written from the design, not from the
 * production code, so the two can disagree.
 */
public final class LifecycleChecker {
  private final WorkGraph graph;
  private final String changeId;
  private final int agents;
  public final List<String> problems = new ArrayList<>();
  int maxHeld;
  final Map<String, Integer> attempts = new HashMap<>();
  public final Map<String, String> states = new HashMap<>();
  public final List<String> completionOrder = new ArrayList<>();

  LifecycleChecker(WorkGraph graph, String changeId, int agents) {
    this.graph = graph;
    this.changeId = changeId;
    this.agents = agents;
  }

  public static LifecycleChecker check(
      WorkGraph graph, String changeId, int agents, List<Event> streamOrder) {
    LifecycleChecker c = new LifecycleChecker(graph, changeId, agents);
    c.run(streamOrder);
    return c;
  }

  private void run(List<Event> all) {
    Map<String, List<String>> deps = new HashMap<>();
    for (WorkGraph.TaskSpec t : graph.tasks()) {
      String id = LifecycleIds.taskId(changeId, t.key());
      deps.put(id, t.dependsOn().stream().map(d -> LifecycleIds.taskId(changeId, d)).toList());
      states.put(id, "pending");
      attempts.put(id, 0);
    }
    Set<String> seen = new HashSet<>();
    boolean created = false;
    boolean verifying = false;
    for (Event e : all) {
      if (!changeId.equals(e.changeId())) {
        continue;
      }
      if (!seen.add(e.eventId())) {
        problems.add("event " + e.eventId() + " (" + e.eventType().wireName() + ") twice");
        continue;
      }
      EventType type = e.eventType();
      if (!created && type != EventType.CHANGE_CREATED) {
        problems.add(type.wireName() + " before change.created");
      }
      if (type == EventType.CHANGE_CREATED) {
        created = true;
        continue;
      }
      String task = e.taskId();
      if (verifying && task != null && type != EventType.CHANGE_REOPENED) {
        problems.add(type.wireName() + " of " + task + " after verification.started");
      }
      if (type == EventType.CHANGE_REOPENED) {
        // Back to work after a rejected Candidate: every Task runs again on its next attempt.
        verifying = false;
        states.replaceAll((t, st) -> "pending");
        continue;
      }
      if (type == EventType.VERIFICATION_STARTED) {
        verifying = true;
        states.forEach(
            (t, s) -> {
              if (!"completed".equals(s)) {
                problems.add("verification.started while " + t + " is " + s);
              }
            });
        if (!"work_graph_completed".equals(e.payload().path("reason").asText())) {
          problems.add("verification.started without reason work_graph_completed");
        }
        continue;
      }
      if (task == null || !states.containsKey(task)) {
        continue;
      }
      String state = states.get(task);
      int attempt = e.payload().path("attempt").asInt(-1);
      switch (type) {
        case TASK_READY -> {
          boolean next = state.equals("pending") || state.equals("failed");
          if (!next || attempt != attempts.get(task) + 1) {
            problems.add("task.ready of " + task + " attempt " + attempt + " while " + state);
          }
          for (String d : deps.get(task)) {
            if (!"completed".equals(states.get(d))) {
              problems.add("task.ready of " + task + " before its dependency " + d + " completed");
            }
          }
          attempts.put(task, attempt);
          move(task, state, "ready");
        }
        case TASK_ASSIGNED -> expect(task, state, attempt, "ready", "assigned");
        case TASK_RUNNING -> expect(task, state, attempt, "assigned", "running");
        case TASK_COMPLETED -> {
          expect(task, state, attempt, "running", "completed");
          completionOrder.add(task);
        }
        case TASK_FAILED -> {
          if (!List.of("ready", "assigned", "running").contains(state)) {
            problems.add("task.failed of " + task + " while " + state);
          }
          move(task, state, "failed");
        }
        default -> {} // agent.woken, changeset.proposed, resource Events
      }
      int held = 0;
      for (String s : states.values()) {
        if (s.equals("assigned") || s.equals("running")) {
          held++;
        }
      }
      maxHeld = Math.max(maxHeld, held);
      if (held > agents) {
        problems.add(held + " Tasks held at once after " + type.wireName() + " of " + task);
      }
    }
    if (!created) {
      problems.add("no change.created");
    }
  }

  private void expect(String task, String state, int attempt, String from, String to) {
    if (!from.equals(state) || attempt != attempts.get(task)) {
      problems.add(
          "task."
              + to
              + " of "
              + task
              + " attempt "
              + attempt
              + " while "
              + state
              + " on attempt "
              + attempts.get(task));
    }
    move(task, state, to);
  }

  private void move(String task, String from, String to) {
    states.put(task, to);
  }
}
