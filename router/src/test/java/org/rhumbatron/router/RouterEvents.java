package org.rhumbatron.router;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;

/** Events for router tests: a Change with Tasks, and projects that share one stream. */
final class RouterEvents {
  private RouterEvents() {}

  /** {@code count} project ids that all map to {@code stream}. */
  static List<String> projectsOnStream(int stream, int count, String prefix) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; ids.size() < count; i++) {
      String id = prefix + "-" + i;
      if (EventStreams.streamIndex(id) == stream) {
        ids.add(id);
      }
    }
    return ids;
  }

  /** change.created, then task.ready and task.completed for each of {@code tasks} Tasks. */
  static List<Event> changeWithTasks(String projectId, String changeId, int tasks) {
    List<Event> events = new ArrayList<>();
    events.add(event(projectId, changeId, null, EventType.CHANGE_CREATED, null));
    for (int t = 0; t < tasks; t++) {
      String task = changeId + "-t" + t;
      events.add(event(projectId, changeId, task, EventType.TASK_READY, null));
      events.add(event(projectId, changeId, task, EventType.TASK_COMPLETED, null));
    }
    return events;
  }

  static Event event(
      String projectId, String changeId, String taskId, EventType type, ObjectNode payload) {
    return Event.builder()
        .eventId(
            changeId == null
                ? StableIds.randomEventId()
                : StableIds.stableEventId(changeId, type, taskId))
        .eventType(type)
        .tenantId("tenant")
        .projectId(projectId)
        .changeId(changeId)
        .taskId(taskId)
        .actor("test")
        .correlationId(changeId == null ? projectId : changeId)
        .timestamp(Instant.parse("2026-12-02T10:00:00Z"))
        .payload(payload == null ? JsonNodeFactory.instance.objectNode() : payload)
        .build();
  }
}
