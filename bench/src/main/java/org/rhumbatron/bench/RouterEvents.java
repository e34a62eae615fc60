package org.rhumbatron.bench;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;

/** The router bench's Projects and Events: task.ready Events spread over given streams. */
final class RouterEvents {
  private RouterEvents() {}

  /** {@code projectsPerStream} project ids per stream. */
  static List<List<String>> projects(int projectsPerStream) {
    List<List<String>> out = new ArrayList<>();
    for (int s = 0; s < EventStreams.STREAM_COUNT; s++) {
      out.add(new ArrayList<>());
    }
    for (int i = 0; out.stream().anyMatch(l -> l.size() < projectsPerStream); i++) {
      String id = "p-bench-router-" + i;
      List<String> l = out.get(EventStreams.streamIndex(id));
      if (l.size() < projectsPerStream) {
        l.add(id);
      }
    }
    return out;
  }

  static List<Event> on(List<Integer> streams, List<List<String>> projects, int n, long from) {
    List<Event> events = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      List<String> ps = projects.get(streams.get(i % streams.size()));
      events.add(event(ps.get((i / streams.size()) % ps.size()), from + i));
    }
    return events;
  }

  /** A task.ready of its own Task: each one moves one item of the project view. */
  static Event event(String projectId, long n) {
    String change = "c-" + projectId;
    String task = "t-" + n;
    return Event.builder()
        .eventId(StableIds.stableEventId(change, EventType.TASK_READY, task))
        .eventType(EventType.TASK_READY)
        .tenantId("tenant-bench")
        .projectId(projectId)
        .changeId(change)
        .taskId(task)
        .actor(projectId + ":0")
        .correlationId(change)
        .timestamp(Instant.parse("2026-12-02T10:00:00Z"))
        .payload(JsonNodeFactory.instance.objectNode().put("agentId", "agent-" + (n % 8)))
        .build();
  }
}
