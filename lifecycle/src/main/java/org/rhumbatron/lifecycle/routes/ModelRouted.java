package org.rhumbatron.lifecycle.routes;

/**
 * A Clef-flash decision: whether the Agent of {@code taskId} wakes for the Event {@code eventId},
 * whose key {@code eventKey} overlaps the Agent's {@code agentKey} by prefix only. Recorded once
 * per Event and Task, with its {@code model.routed} Event.
 *
 * @param decision {@code wake} or {@code skip}
 * @param probability the model's probability, or null when it gave none
 * @param reason why: {@code model}, {@code abstained}, {@code daily_cap}, {@code timeout}, ...
 */
public record ModelRouted(
    String eventId,
    String eventType,
    String projectId,
    String changeId,
    String taskId,
    String agentId,
    String eventKey,
    String agentKey,
    String decision,
    Double probability,
    String reason,
    long latencyMs) {

  public boolean wakes() {
    return "wake".equals(decision);
  }
}
