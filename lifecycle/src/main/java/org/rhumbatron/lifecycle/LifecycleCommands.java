package org.rhumbatron.lifecycle;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.rhumbatron.lifecycle.changes.ChangeLedger;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.platform.queue.SendReceipt;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.StableIds;

/**
 * The commands the lifecycle builds: the Project and app commands it sends to the integration
 * queue, and those whose ids a redelivery must repeat (rebase, candidate again, release start).
 */
public final class LifecycleCommands {
  private final Commands commands;
  private final Clock clock;

  public LifecycleCommands(Commands commands, Clock clock) {
    this.commands = commands;
    this.clock = clock;
  }

  /** Sends {@code project.provision}; its handler creates the Project. */
  public CompletableFuture<SendReceipt> provisionProject(
      String projectId, String tenantId, String name) {
    ObjectNode payload = ChangeLedger.payload();
    payload.put("tenantId", tenantId);
    payload.put("name", name);
    return send(
        "cmd_project.provision_" + projectId, CommandType.PROJECT_PROVISION, projectId, payload);
  }

  /** Sends {@code project.cleanup}: its handler cancels an archived Project's open Changes. */
  public CompletableFuture<SendReceipt> cleanupProject(String projectId) {
    return oneOff(CommandType.PROJECT_CLEANUP, projectId);
  }

  /** Sends {@code app.provision}: its handler marks the Project as having a live app. */
  public CompletableFuture<SendReceipt> provisionApp(String projectId) {
    return oneOff(CommandType.APP_PROVISION, projectId);
  }

  /** Sends {@code app.remove}. */
  public CompletableFuture<SendReceipt> removeApp(String projectId) {
    return oneOff(CommandType.APP_REMOVE, projectId);
  }

  /** An operator's one-off command (cleanup, app provision or removal) for a Project. */
  private CompletableFuture<SendReceipt> oneOff(CommandType type, String projectId) {
    return send(
        StableIds.randomCommandId(UUID::randomUUID), type, projectId, ChangeLedger.payload());
  }

  private CompletableFuture<SendReceipt> send(
      String id, CommandType type, String projectId, ObjectNode payload) {
    return commands.send(
        Command.builder()
            .commandId(id)
            .commandType(type)
            .projectId(projectId)
            .createdAt(clock.instant())
            .payload(payload)
            .build());
  }

  public Command rebase(String projectId, String changeId, String staleCandidate) {
    ObjectNode payload = ChangeLedger.payload();
    payload.put("staleCandidateId", staleCandidate);
    return changeCommand(
        "cmd_" + staleCandidate + "_rebase",
        CommandType.CANDIDATE_CREATE,
        projectId,
        changeId,
        payload);
  }

  public Command candidateAgain(String projectId, String changeId, String settleCommandId) {
    ObjectNode payload = ChangeLedger.payload();
    payload.put("reason", "candidate_missing");
    return changeCommand(
        settleCommandId + "_candidate", CommandType.CANDIDATE_CREATE, projectId, changeId, payload);
  }

  public Command releaseStart(String projectId, String changeId, String releaseId) {
    ObjectNode payload = ChangeLedger.payload();
    payload.put("releaseId", releaseId);
    return changeCommand(
        StableIds.release(releaseId), CommandType.RELEASE_START, projectId, changeId, payload);
  }

  private Command changeCommand(
      String id, CommandType type, String projectId, String changeId, ObjectNode payload) {
    return Command.builder()
        .commandId(id)
        .commandType(type)
        .projectId(projectId)
        .changeId(changeId)
        .createdAt(clock.instant())
        .payload(payload)
        .build();
  }
}
