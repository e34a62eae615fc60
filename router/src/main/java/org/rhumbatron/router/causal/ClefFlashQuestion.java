package org.rhumbatron.router.causal;

import org.rhumbatron.protocol.EventType;

/**
 * What Clef-flash is asked about one prefix overlap: a resource Event and the Task of an active
 * Agent whose scope shares a prefix with the Event's resource key.
 *
 * @param eventKey the resource key of the Event
 * @param agentKey the active Agent's scope key that overlaps it by prefix
 * @param taskTitle the title of the Agent's Task; may be empty, never null
 */
public record ClefFlashQuestion(
    String projectId,
    String changeId,
    String taskId,
    String taskTitle,
    String eventId,
    EventType eventType,
    String eventKey,
    String agentKey) {

  public ClefFlashQuestion {
    required("projectId", projectId);
    required("changeId", changeId);
    required("taskId", taskId);
    required("eventId", eventId);
    required("eventKey", eventKey);
    required("agentKey", agentKey);
    if (eventType == null) {
      throw new IllegalArgumentException("eventType is required");
    }
    if (taskTitle == null) {
      throw new IllegalArgumentException("taskTitle must not be null (empty is allowed)");
    }
  }

  private static void required(String field, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(field + " is required and must not be blank");
    }
  }
}
