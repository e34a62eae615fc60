package org.rhumbatron.protocol;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;

/**
 * A Command: a request for work on a queue, e.g. {@code agent.wake}. The fields are the seed's, in
 * the seed's order; {@link #commandId()} is the stable key (the message id is {@code
 * <queue>:<commandId>}, see {@link StableIds#commandMessageId}).
 *
 * <p>Nullable: {@code projectId} only for a type that does not {@link CommandType#requiresProject()
 * require a project} (forks.sweep); {@code changeId} unless the type {@link
 * CommandType#countsTowardChangeCap() counts toward the per-Change cap}, which needs it; {@code
 * taskId}; {@code deadline}, which must not be before {@code createdAt}. The payload is copied in
 * and out, so the record stays immutable.
 *
 * @param commandId {@code cmd_...}, see {@link StableIds}
 * @param attempt 1 for the first send; an operator's Retry sends attempt + 1
 * @param createdAt when the producer made the command; the protocol reads no clock
 * @param deadline after which the work is pointless, or null
 */
public record Command(
    String commandId,
    CommandType commandType,
    String projectId,
    String changeId,
    String taskId,
    int attempt,
    Instant createdAt,
    Instant deadline,
    ObjectNode payload) {

  public Command {
    Check.matching(
        "/commandId", Check.required("/commandId", commandId), IdFormat.COMMAND_ID_PATTERN);
    Check.required("/commandType", commandType);
    if (commandType.requiresProject()) {
      Check.required("/projectId", projectId);
    }
    Check.optionalId("/projectId", projectId);
    if (commandType.countsTowardChangeCap()) {
      Check.required("/changeId", changeId);
    }
    Check.optionalId("/changeId", changeId);
    Check.optionalId("/taskId", taskId);
    Check.atLeast("/attempt", attempt, 1);
    Check.timestamp("/createdAt", createdAt);
    Check.optionalTimestamp("/deadline", deadline);
    if (deadline != null && deadline.isBefore(createdAt)) {
      throw new EnvelopeException(
          "/deadline",
          EnvelopeException.ORDER,
          "deadline " + deadline + " is before createdAt " + createdAt);
    }
    payload = Payloads.canonicalCopy("/payload", payload);
  }

  /** A copy of the payload; changing it does not change the Command. */
  @Override
  public ObjectNode payload() {
    return payload.deepCopy();
  }

  /** The payload itself, for the codec, which only reads it. */
  ObjectNode payloadView() {
    return payload;
  }

  /** The same command with another attempt number, e.g. attempt + 1 for an operator's Retry. */
  public Command withAttempt(int attempt) {
    return new Command(
        commandId, commandType, projectId, changeId, taskId, attempt, createdAt, deadline, payload);
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * Builds a Command field by field; {@code attempt} defaults to 1 and {@code payload} to {@code
   * {}}. {@link #build()} runs the record's checks.
   */
  public static final class Builder {
    private String commandId;
    private CommandType commandType;
    private String projectId;
    private String changeId;
    private String taskId;
    private int attempt = 1;
    private Instant createdAt;
    private Instant deadline;
    private ObjectNode payload = JsonNodeFactory.instance.objectNode();

    private Builder() {}

    public Builder commandId(String commandId) {
      this.commandId = commandId;
      return this;
    }

    public Builder commandType(CommandType commandType) {
      this.commandType = commandType;
      return this;
    }

    public Builder projectId(String projectId) {
      this.projectId = projectId;
      return this;
    }

    public Builder changeId(String changeId) {
      this.changeId = changeId;
      return this;
    }

    public Builder taskId(String taskId) {
      this.taskId = taskId;
      return this;
    }

    public Builder attempt(int attempt) {
      this.attempt = attempt;
      return this;
    }

    public Builder createdAt(Instant createdAt) {
      this.createdAt = createdAt;
      return this;
    }

    public Builder deadline(Instant deadline) {
      this.deadline = deadline;
      return this;
    }

    public Builder payload(ObjectNode payload) {
      this.payload = payload;
      return this;
    }

    public Command build() {
      return new Command(
          commandId,
          commandType,
          projectId,
          changeId,
          taskId,
          attempt,
          createdAt,
          deadline,
          payload);
    }
  }
}
