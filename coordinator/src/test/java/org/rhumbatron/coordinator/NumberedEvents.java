package org.rhumbatron.coordinator;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;

/**
 * Change Events that carry a per-project counter: a stable id over (change of the project, n) and
 * {@code {"n": n}} in the payload, so a test can read the commit order back from a stream.
 */
public final class NumberedEvents {
  private NumberedEvents() {}

  /** The one Change of {@code projectId} that the numbered events belong to. */
  public static String changeOf(String projectId) {
    return "chg-" + projectId;
  }

  /** The stable id of event number {@code n} of {@code projectId}. */
  public static String idOf(String projectId, int n) {
    return StableIds.stableEventId(
        changeOf(projectId), EventType.TASK_COMPLETED, "task-load", "n" + n);
  }

  public static Event event(String projectId, int n, Instant at) {
    ObjectNode payload = JsonNodeFactory.instance.objectNode();
    payload.put("n", n);
    return Event.builder()
        .eventId(idOf(projectId, n))
        .eventType(EventType.TASK_COMPLETED)
        .tenantId("tenant-1")
        .projectId(projectId)
        .changeId(changeOf(projectId))
        .taskId("task-load")
        .actor("test")
        .correlationId(changeOf(projectId))
        .timestamp(at)
        .payload(payload)
        .build();
  }

  /** The counter of a numbered event, or -1 for any other Event. */
  public static int numberOf(Event e) {
    return e.eventType() == EventType.TASK_COMPLETED && e.payload().has("n")
        ? e.payload().get("n").asInt()
        : -1;
  }

  /** {@code count} project ids {@code <prefix>-<i>} (i from 0). */
  public static java.util.List<String> projects(String prefix, int count) {
    return java.util.stream.IntStream.range(0, count).mapToObj(i -> prefix + "-" + i).toList();
  }

  /** The first project id {@code <prefix>-<i>} that maps to event stream {@code stream}. */
  public static String projectOnStream(String prefix, int stream) {
    for (int i = 0; ; i++) {
      String p = prefix + "-" + i;
      if (EventStreams.streamIndex(p) == stream) {
        return p;
      }
    }
  }
}
