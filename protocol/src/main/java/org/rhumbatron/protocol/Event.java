package org.rhumbatron.protocol;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;

/**
 * An Event: an immutable fact on the event log, e.g. {@code task.completed}. The fields are the
 * seed's, in the seed's order; {@link #eventId()} is the stable key the outbox and every consumer
 * deduplicate on.
 *
 * <p>Nullable: {@code changeId} and {@code taskId} (project Events have no Change, Change Events
 * may have no Task), {@code resource} (required only for {@link EventType.Kind#RESOURCE} types,
 * whose overlap the causal router checks), {@code canonicalGeneration} (set by Events that know the
 * base generation) and {@code causedBy} (a root cause has none). Everything else is required. The
 * payload is copied in and out, so the record stays immutable.
 *
 * @param eventId {@code evt_} + 32 hex digits, see {@link StableIds}
 * @param eventVersion version of this type's payload shape, at least 1
 * @param actor the writer, e.g. the id of the ResourceShardActor that committed the Event
 * @param canonicalGeneration 0 or more, at most 2^53 - 1
 * @param causedBy id of the Event or Command that caused this one
 * @param correlationId id shared by every Event and Command of one causal chain
 * @param timestamp when the writer committed the Event; the protocol reads no clock
 */
public record Event(
    String eventId,
    EventType eventType,
    int eventVersion,
    String tenantId,
    String projectId,
    String changeId,
    String taskId,
    String actor,
    String resource,
    Long canonicalGeneration,
    String causedBy,
    String correlationId,
    Instant timestamp,
    ObjectNode payload) {

  /** The payload version every type has today. */
  public static final int CURRENT_VERSION = 1;

  public Event {
    Check.matching("/eventId", Check.required("/eventId", eventId), IdFormat.EVENT_ID_PATTERN);
    Check.required("/eventType", eventType);
    Check.atLeast("/eventVersion", eventVersion, 1);
    Check.id("/tenantId", tenantId);
    Check.id("/projectId", projectId);
    Check.optionalId("/changeId", changeId);
    Check.optionalId("/taskId", taskId);
    Check.id("/actor", actor);
    if (eventType.kind() == EventType.Kind.RESOURCE) {
      Check.required("/resource", resource);
    }
    Check.matching("/resource", resource, IdFormat.RESOURCE_PATTERN);
    Check.wellFormed("/resource", resource);
    Check.optionalGeneration("/canonicalGeneration", canonicalGeneration);
    Check.matching("/causedBy", causedBy, IdFormat.REFERENCE_PATTERN);
    Check.matching(
        "/correlationId",
        Check.required("/correlationId", correlationId),
        IdFormat.REFERENCE_PATTERN);
    Check.timestamp("/timestamp", timestamp);
    payload = Payloads.canonicalCopy("/payload", payload);
  }

  /** A copy of the payload; changing it does not change the Event. */
  @Override
  public ObjectNode payload() {
    return payload.deepCopy();
  }

  /** The payload itself, for the codec, which only reads it. */
  ObjectNode payloadView() {
    return payload;
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * Builds an Event field by field; {@code eventVersion} defaults to {@link #CURRENT_VERSION} and
   * {@code payload} to {@code {}}. {@link #build()} runs the record's checks.
   */
  public static final class Builder {
    private String eventId;
    private EventType eventType;
    private int eventVersion = CURRENT_VERSION;
    private String tenantId;
    private String projectId;
    private String changeId;
    private String taskId;
    private String actor;
    private String resource;
    private Long canonicalGeneration;
    private String causedBy;
    private String correlationId;
    private Instant timestamp;
    private ObjectNode payload = JsonNodeFactory.instance.objectNode();

    private Builder() {}

    public Builder eventId(String eventId) {
      this.eventId = eventId;
      return this;
    }

    public Builder eventType(EventType eventType) {
      this.eventType = eventType;
      return this;
    }

    public Builder eventVersion(int eventVersion) {
      this.eventVersion = eventVersion;
      return this;
    }

    public Builder tenantId(String tenantId) {
      this.tenantId = tenantId;
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

    public Builder actor(String actor) {
      this.actor = actor;
      return this;
    }

    public Builder resource(String resource) {
      this.resource = resource;
      return this;
    }

    public Builder canonicalGeneration(Long canonicalGeneration) {
      this.canonicalGeneration = canonicalGeneration;
      return this;
    }

    public Builder causedBy(String causedBy) {
      this.causedBy = causedBy;
      return this;
    }

    public Builder correlationId(String correlationId) {
      this.correlationId = correlationId;
      return this;
    }

    public Builder timestamp(Instant timestamp) {
      this.timestamp = timestamp;
      return this;
    }

    public Builder payload(ObjectNode payload) {
      this.payload = payload;
      return this;
    }

    public Event build() {
      return new Event(
          eventId,
          eventType,
          eventVersion,
          tenantId,
          projectId,
          changeId,
          taskId,
          actor,
          resource,
          canonicalGeneration,
          causedBy,
          correlationId,
          timestamp,
          payload);
    }
  }
}
