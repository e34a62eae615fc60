package org.rhumbatron.lifecycle.changes;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import org.rhumbatron.lifecycle.LifecycleIds;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;

/** An {@code agent.wake} that change.dispatch sends for a Task it admitted an Agent for. */
public record Wake(String projectId, String changeId, String taskId, String agentId, int attempt) {

  public TaskRef task() {
    return new TaskRef(projectId, changeId, taskId, agentId, attempt);
  }

  /** The command: {@code cmd_<task>_ready} (see {@link LifecycleIds#readyWake}). */
  public Command command(Instant now) {
    ObjectNode payload = JsonNodeFactory.instance.objectNode();
    payload.put("agentId", agentId);
    payload.put("attempt", attempt);
    payload.put("reason", "ready");
    return Command.builder()
        .commandId(LifecycleIds.readyWake(taskId, attempt))
        .commandType(CommandType.AGENT_WAKE)
        .projectId(projectId)
        .changeId(changeId)
        .taskId(taskId)
        .createdAt(now)
        .payload(payload)
        .build();
  }
}
