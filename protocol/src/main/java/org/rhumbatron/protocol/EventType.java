package org.rhumbatron.protocol;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The closed list of Event types ({@code EVENT_TYPES} of the seed's {@code event.ts}).
 *
 * <p>It holds every type the seed names, the lifecycle types of the Change lifecycle (project,
 * Change, Task, Candidate and release states) and two informational types that feed analytics
 * ({@code agent.woken} for {@code agent_wakeup}, {@code model.routed} for {@code model_route}). A
 * type that is not here cannot be encoded or decoded.
 *
 * <p>Each type says how the causal router treats it ({@link Kind}) and which actor's outbox writes
 * it ({@link Writer}).
 */
public enum EventType {
  // Project (the ProjectRootActor keeps these flags)
  PROJECT_CREATED("project.created", Kind.INFORMATIONAL, Writer.ROOT),
  PROJECT_ARCHIVED("project.archived", Kind.INFORMATIONAL, Writer.SHARD),
  PROJECT_DELETED("project.deleted", Kind.INFORMATIONAL, Writer.SHARD),
  APP_PROVISIONED("app.provisioned", Kind.INFORMATIONAL, Writer.SHARD),
  APP_REMOVED("app.removed", Kind.INFORMATIONAL, Writer.SHARD),

  // Change states: open -> verifying -> awaiting_approval -> releasing -> completed, and the ends
  // Routed: a new Change's root Tasks are newly ready, as after task.completed (change.dispatch).
  CHANGE_CREATED("change.created", Kind.ROUTED, Writer.SHARD),
  CHANGE_VERIFYING("change.verifying", Kind.INFORMATIONAL, Writer.SHARD),
  // Back to work after a rejected Candidate: open again, its Tasks ready for their next attempt.
  CHANGE_REOPENED("change.reopened", Kind.INFORMATIONAL, Writer.SHARD),
  CHANGE_AWAITING_APPROVAL("change.awaiting_approval", Kind.INFORMATIONAL, Writer.SHARD),
  CHANGE_RELEASING("change.releasing", Kind.INFORMATIONAL, Writer.SHARD),
  CHANGE_COMPLETED("change.completed", Kind.INFORMATIONAL, Writer.SHARD),
  CHANGE_FAILED("change.failed", Kind.INFORMATIONAL, Writer.SHARD),
  CHANGE_CANCELLED("change.cancelled", Kind.INFORMATIONAL, Writer.SHARD),
  CHANGE_DECLINED("change.declined", Kind.INFORMATIONAL, Writer.SHARD),
  CHANGE_NOT_SELECTED("change.not_selected", Kind.INFORMATIONAL, Writer.SHARD),

  // Task states: pending -> ready -> assigned -> running -> completed | failed | blocked, and
  // cancelled: a Task that had not ended when its Change ended (reason change_failed, ...)
  TASK_READY("task.ready", Kind.ROUTED, Writer.SHARD),
  TASK_ASSIGNED("task.assigned", Kind.INFORMATIONAL, Writer.SHARD),
  TASK_RUNNING("task.running", Kind.INFORMATIONAL, Writer.SHARD),
  TASK_COMPLETED("task.completed", Kind.ROUTED, Writer.SHARD),
  TASK_FAILED("task.failed", Kind.ROUTED, Writer.SHARD),
  TASK_BLOCKED("task.blocked", Kind.INFORMATIONAL, Writer.SHARD),
  TASK_CANCELLED("task.cancelled", Kind.INFORMATIONAL, Writer.SHARD),

  // Resource Events: what an Agent declares and holds on resource keys
  INTENT_DECLARED("intent.declared", Kind.RESOURCE, Writer.SHARD),
  INTENT_CHANGED("intent.changed", Kind.RESOURCE, Writer.SHARD),
  CHALLENGE_CREATED("challenge.created", Kind.RESOURCE, Writer.SHARD),
  CHANGESET_PROPOSED("changeset.proposed", Kind.RESOURCE, Writer.SHARD),
  CLAIM_ACQUIRED("claim.acquired", Kind.INFORMATIONAL, Writer.SHARD),
  CLAIM_RELEASED("claim.released", Kind.RESOURCE, Writer.SHARD),
  CLAIM_EXPIRED("claim.expired", Kind.RESOURCE, Writer.SHARD),

  // Verification, Candidates and promotion
  VERIFICATION_STARTED("verification.started", Kind.ROUTED, Writer.SHARD),
  CANDIDATE_CREATED("candidate.created", Kind.INFORMATIONAL, Writer.SHARD),
  CANDIDATE_VERIFIED("candidate.verified", Kind.INFORMATIONAL, Writer.SHARD),
  CANDIDATE_REJECTED("candidate.rejected", Kind.INFORMATIONAL, Writer.SHARD),
  CANDIDATE_STALE("candidate.stale", Kind.INFORMATIONAL, Writer.SHARD),
  CANDIDATE_PROMOTED("candidate.promoted", Kind.INFORMATIONAL, Writer.SHARD),
  ARTIFACT_PROMOTED("artifact.promoted", Kind.ROUTED, Writer.ROOT),
  CANONICAL_ADVANCED("canonical.advanced", Kind.ROUTED, Writer.ROOT),

  // Release of a promoted generation to the live app
  RELEASE_STARTED("release.started", Kind.INFORMATIONAL, Writer.SHARD),
  RELEASE_COMPLETED("release.completed", Kind.INFORMATIONAL, Writer.SHARD),
  RELEASE_FAILED("release.failed", Kind.INFORMATIONAL, Writer.SHARD),

  // Informational: facts for the project view and analytics only
  AGENT_WOKEN("agent.woken", Kind.INFORMATIONAL, Writer.SHARD),
  MODEL_ROUTED("model.routed", Kind.INFORMATIONAL, Writer.SHARD);

  /** How the causal router treats a type (the seed's "Causal routing" flowchart). */
  public enum Kind {
    /**
     * The router has a rule for this type: change.created (the first change.dispatch), task.ready
     * (skip, the dispatcher already sent the wake), task.completed, task.failed,
     * verification.started, canonical.advanced, artifact.promoted.
     */
    ROUTED,
    /** A resource Event: the router wakes Agents whose resources overlap {@code resource}. */
    RESOURCE,
    /** The router takes no action; the projector, archiver and analytics still read it. */
    INFORMATIONAL
  }

  /** Which actor's outbox writes the type (seed: "Transactional outbox to the event log"). */
  public enum Writer {
    /** ProjectRootActor: project.created, artifact.promoted, canonical.advanced. */
    ROOT,
    /** ResourceShardActor: every other type; Change Events go to the shard of change:&lt;id&gt;. */
    SHARD
  }

  private static final Map<String, EventType> BY_WIRE_NAME =
      Arrays.stream(values()).collect(Collectors.toMap(EventType::wireName, Function.identity()));

  private final String wireName;
  private final Kind kind;
  private final Writer writer;

  EventType(String wireName, Kind kind, Writer writer) {
    this.wireName = wireName;
    this.kind = kind;
    this.writer = writer;
  }

  /** The dotted name on the wire, e.g. {@code task.completed}. */
  @JsonValue
  public String wireName() {
    return wireName;
  }

  public Kind kind() {
    return kind;
  }

  public Writer writer() {
    return writer;
  }

  /**
   * The type with this wire name.
   *
   * @throws EnvelopeException with field {@code /eventType} and rule {@code enum} (or {@code
   *     required} for null) when the name is not on the closed list
   */
  @JsonCreator
  public static EventType fromWire(String wireName) {
    Check.required("/eventType", wireName);
    EventType type = BY_WIRE_NAME.get(wireName);
    if (type == null) {
      throw new EnvelopeException(
          "/eventType",
          EnvelopeException.ENUM,
          "unknown event type \"" + Check.abbreviate(wireName) + "\"");
    }
    return type;
  }
}
