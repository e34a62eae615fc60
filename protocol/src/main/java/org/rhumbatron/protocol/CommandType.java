package org.rhumbatron.protocol;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The closed list of Command types: every command the seed names, each with the queue of the seed's
 * "Queues" diagram.
 */
public enum CommandType {
  AGENT_WAKE("agent.wake", Queue.AGENT_WAKEUPS, Flag.CAPPED),
  CHANGE_DISPATCH("change.dispatch", Queue.INTEGRATION, Flag.CAPPED),
  /** Normally on integration; after a rebase the integration module sends it to verification. */
  CANDIDATE_CREATE("candidate.create", Queue.INTEGRATION, Flag.CAPPED),
  CHANGE_SETTLE("change.settle", Queue.INTEGRATION, Flag.CAPPED),
  CANDIDATES_RECOMPOSE("candidates.recompose", Queue.INTEGRATION),
  /** The daily 04:17 UTC sweep; one for all Projects, so it is the one without a projectId. */
  FORKS_SWEEP("forks.sweep", Queue.INTEGRATION, Flag.NO_PROJECT),
  PROJECT_CLEANUP("project.cleanup", Queue.INTEGRATION),
  RELEASE_RECOVER("release.recover", Queue.INTEGRATION),
  PROJECT_PROVISION("project.provision", Queue.INTEGRATION),
  APP_PROVISION("app.provision", Queue.INTEGRATION),
  APP_REMOVE("app.remove", Queue.INTEGRATION),
  INDEX_BUILD("index.build", Queue.INDEXING),
  INDEX_PURGE("index.purge", Queue.INDEXING),
  VERIFICATION_START("verification.start", Queue.VERIFICATION, Flag.WORKFLOW),
  RELEASE_START("release.start", Queue.RELEASE, Flag.WORKFLOW);

  private enum Flag {
    CAPPED,
    NO_PROJECT,
    WORKFLOW
  }

  private static final Map<String, CommandType> BY_WIRE_NAME =
      Arrays.stream(values()).collect(Collectors.toMap(CommandType::wireName, Function.identity()));

  private final String wireName;
  private final Queue queue;
  private final Flag flag;

  CommandType(String wireName, Queue queue) {
    this(wireName, queue, null);
  }

  CommandType(String wireName, Queue queue, Flag flag) {
    this.wireName = wireName;
    this.queue = queue;
    this.flag = flag;
  }

  /** The dotted name on the wire, e.g. {@code agent.wake}. */
  @JsonValue
  public String wireName() {
    return wireName;
  }

  /** The queue a producer sends this command to. */
  public Queue queue() {
    return queue;
  }

  /**
   * The queue an operator's Retry of a dead letter sends it to: the seed sends agent.wake to
   * agent-wakeups and every other command to integration (whose handler also serves verification
   * and release).
   */
  public Queue retryQueue() {
    return this == AGENT_WAKE ? Queue.AGENT_WAKEUPS : Queue.INTEGRATION;
  }

  /**
   * Whether the command counts toward the 1,000 commands per Change per day: change.dispatch,
   * candidate.create, change.settle and agent.wake. Such a command must name its Change.
   */
  public boolean countsTowardChangeCap() {
    return flag == Flag.CAPPED;
  }

  /** Whether the command must name a Project; only the global forks.sweep does not. */
  public boolean requiresProject() {
    return flag != Flag.NO_PROJECT;
  }

  /** Whether the command starts a Workflow whose instance id is its idempotency key. */
  public boolean startsWorkflow() {
    return flag == Flag.WORKFLOW;
  }

  /**
   * The type with this wire name.
   *
   * @throws EnvelopeException with field {@code /commandType} and rule {@code enum} (or {@code
   *     required} for null) when the name is not on the closed list
   */
  @JsonCreator
  public static CommandType fromWire(String wireName) {
    Check.required("/commandType", wireName);
    CommandType type = BY_WIRE_NAME.get(wireName);
    if (type == null) {
      throw new EnvelopeException(
          "/commandType",
          EnvelopeException.ENUM,
          "unknown command type \"" + Check.abbreviate(wireName) + "\"");
    }
    return type;
  }
}
