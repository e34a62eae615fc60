package org.rhumbatron.coordinator.view;

import java.util.Optional;
import org.rhumbatron.protocol.Event;

/**
 * What one Event says about one item of the read model: its kind, id and new state. The mapping is
 * the Change lifecycle; an Event that names no item (e.g. a resource Event) maps to nothing and
 * only moves the project's last event.
 */
record ViewItem(String kind, String itemId, String state, String changeId) {

  static final String CHANGE = "change";
  static final String TASK = "task";
  static final String CANDIDATE = "candidate";
  static final String AGENT = "agent";

  /**
   * The item {@code event} moves, if any.
   *
   * @throws ProjectionException when the Event is of a type that names an item but lacks its id
   */
  static Optional<ViewItem> of(Event event) {
    String type = event.eventType().wireName();
    int dot = type.indexOf('.');
    String family = type.substring(0, dot);
    String state = type.substring(dot + 1);
    return switch (family) {
      case "change" ->
          Optional.of(
              new ViewItem(
                  CHANGE,
                  required(event, "changeId", event.changeId()),
                  "created".equals(state) || "reopened".equals(state) ? "open" : state,
                  event.changeId()));
      case "task" ->
          Optional.of(
              new ViewItem(
                  TASK, required(event, "taskId", event.taskId()), state, event.changeId()));
      case "candidate" ->
          Optional.of(
              new ViewItem(
                  CANDIDATE,
                  required(event, "payload.candidateId", text(event, "candidateId")),
                  "created".equals(state) ? "open" : state,
                  event.changeId()));
      default -> Optional.empty();
    };
  }

  /**
   * The Agent an Event moves: {@code agent.woken} and {@code task.assigned} make it active, {@code
   * task.completed}, {@code task.failed}, {@code task.blocked} and {@code task.cancelled} (its
   * Change ended) free it. Only when the payload names it ({@code agentId}).
   */
  static Optional<ViewItem> agentOf(Event event) {
    String agentId = text(event, "agentId");
    if (agentId == null) {
      return Optional.empty();
    }
    String state =
        switch (event.eventType()) {
          case AGENT_WOKEN, TASK_ASSIGNED, TASK_RUNNING -> "active";
          case TASK_COMPLETED, TASK_FAILED, TASK_BLOCKED, TASK_CANCELLED -> "idle";
          default -> null;
        };
    return state == null
        ? Optional.empty()
        : Optional.of(new ViewItem(AGENT, agentId, state, event.changeId()));
  }

  private static String text(Event event, String field) {
    var node = event.payload().get(field);
    return node == null || !node.isTextual() || node.asText().isBlank() ? null : node.asText();
  }

  private static String required(Event event, String field, String value) {
    if (value == null) {
      throw new ProjectionException(
          event.eventId(),
          event.eventType().wireName() + " has no " + field + ": the project view cannot apply it");
    }
    return value;
  }
}
