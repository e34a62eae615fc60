package org.rhumbatron.router.causal;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.util.List;
import org.rhumbatron.lifecycle.claims.ActiveScopes;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;

/**
 * The commands an Event causes under the seed's rules, each with an id derived from the Event so
 * that a redelivery sends the same ids.
 */
final class CausalCommands {
  private final Clock clock;

  CausalCommands(Clock clock) {
    this.clock = clock;
  }

  /** The commands a lifecycle Event causes. */
  List<Command> of(Event e) {
    if (e.eventType() == EventType.TASK_READY
        || e.eventType().kind() == EventType.Kind.INFORMATIONAL) {
      return List.of();
    }
    return switch (e.eventType()) {
      case CHANGE_CREATED, TASK_COMPLETED ->
          one(command(e, CommandType.CHANGE_DISPATCH, "dispatch"));
      case TASK_FAILED -> one(command(e, CommandType.CHANGE_SETTLE, "settle"));
      case VERIFICATION_STARTED ->
          "work_graph_completed".equals(e.payload().path("reason").asText())
              ? one(command(e, CommandType.CANDIDATE_CREATE, "candidate"))
              : List.of();
      case ARTIFACT_PROMOTED -> one(projectCommand(e, CommandType.INDEX_BUILD, "index"));
      case CANONICAL_ADVANCED ->
          List.of(
              projectCommand(e, CommandType.CANDIDATES_RECOMPOSE, "recompose"),
              projectCommand(e, CommandType.INDEX_BUILD, "index"));
      default -> List.of();
    };
  }

  /** After canonical.advanced: {@code agent.wake} with {@code cmd_<event>_<task>}. */
  Command advancedWake(Event e, TaskRef held) {
    ObjectNode payload = JsonNodeFactory.instance.objectNode();
    payload.put("agentId", held.agentId());
    payload.put("attempt", held.attempt());
    payload.put("reason", e.eventType().wireName());
    payload.put("eventId", e.eventId());
    return wake(e, held.changeId(), held.taskId(), payload);
  }

  /** The wake of an Agent whose scope the resource Event overlaps ({@code overlap}: why). */
  Command overlapWake(Event e, ActiveScopes.Match m, String overlap) {
    ObjectNode payload = JsonNodeFactory.instance.objectNode();
    payload.put("agentId", m.agentId());
    payload.put("attempt", m.attempt());
    payload.put("reason", e.eventType().wireName());
    payload.put("eventId", e.eventId());
    payload.put("overlap", overlap);
    payload.put("eventKey", m.eventKey());
    payload.put("agentKey", m.agentKey());
    return wake(e, m.changeId(), m.taskId(), payload);
  }

  private Command wake(Event e, String changeId, String taskId, ObjectNode payload) {
    return Command.builder()
        .commandId(StableIds.routerWake(e.eventId(), taskId))
        .commandType(CommandType.AGENT_WAKE)
        .projectId(e.projectId())
        .changeId(changeId)
        .taskId(taskId)
        .createdAt(clock.instant())
        .payload(payload)
        .build();
  }

  private static List<Command> one(Command c) {
    return c == null ? List.of() : List.of(c);
  }

  /** A command of the Event's project, with its generation in the payload. */
  private Command projectCommand(Event e, CommandType type, String suffix) {
    ObjectNode payload = JsonNodeFactory.instance.objectNode();
    payload.put("eventId", e.eventId());
    payload.put("eventType", e.eventType().wireName());
    if (e.canonicalGeneration() != null) {
      payload.put("generation", e.canonicalGeneration());
    }
    if (e.payload().hasNonNull("candidateId")) {
      payload.put("candidateId", e.payload().get("candidateId").asText());
    }
    return fromEvent(e, type, suffix, payload);
  }

  private Command command(Event e, CommandType type, String suffix) {
    if (e.changeId() == null) {
      return null; // a malformed lifecycle Event: nothing to dispatch
    }
    ObjectNode payload = JsonNodeFactory.instance.objectNode();
    payload.put("eventId", e.eventId());
    payload.put("eventType", e.eventType().wireName());
    if (e.taskId() != null) {
      payload.put("taskId", e.taskId()); // not the command's own: a Change command has no Task
    }
    return fromEvent(e, type, suffix, payload);
  }

  /** {@code cmd_<event>_<suffix>}, of the Event's project and Change. */
  private Command fromEvent(Event e, CommandType type, String suffix, ObjectNode payload) {
    return Command.builder()
        .commandId("cmd_" + e.eventId() + "_" + suffix)
        .commandType(type)
        .projectId(e.projectId())
        .changeId(e.changeId())
        .createdAt(clock.instant())
        .payload(payload)
        .build();
  }
}
