package org.rhumbatron.coordinator.project;

import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import org.rhumbatron.coordinator.actor.ActorType;
import org.rhumbatron.coordinator.outbox.Outbox;
import org.rhumbatron.coordinator.outbox.OutboxActor;
import org.rhumbatron.coordinator.outbox.OutboxPublisher;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;

/**
 * One per Project: owns the project row (canonical generation, live app, archived / deleted) and
 * writes the root's Events: {@code project.created}, {@code artifact.promoted} and {@code
 * canonical.advanced}. Its own transactions use random event ids; each runs once.
 */
public final class ProjectRootActor extends OutboxActor {
  public static final String ACTOR_CLASS = "project-root";

  public ProjectRootActor(
      org.rhumbatron.coordinator.actor.ActorContext context,
      Outbox outbox,
      OutboxPublisher publisher) {
    super(context, outbox, publisher);
  }

  public static ActorType<ProjectRootActor> type(Outbox outbox, OutboxPublisher publisher) {
    return new ActorType<>(ACTOR_CLASS, c -> new ProjectRootActor(c, outbox, publisher));
  }

  @Override
  public String projectId() {
    return address().actorId();
  }

  /**
   * Creates the project and writes {@code project.created}; a repeat changes nothing and returns
   * false.
   */
  public CompletableFuture<Boolean> createProject(String tenantId, String name) {
    return transactWithEvents(
        (tx, out) -> {
          long now = clock().millis();
          int inserted =
              tx.update(
                  "INSERT INTO projects (project_id, tenant_id, name, status, canonical_generation,"
                      + " has_live_app, created_at_ms, updated_at_ms)"
                      + " VALUES (?, ?, ?, ?, 0, 0, ?, ?) ON CONFLICT DO NOTHING",
                  projectId(),
                  tenantId,
                  name,
                  ProjectStatus.ACTIVE.dbName(),
                  now,
                  now);
          if (inserted == 0) {
            return false;
          }
          out.append(event(tenantId, EventType.PROJECT_CREATED, 0L, null).build());
          return true;
        });
  }

  /**
   * Advances the canonical generation from {@code expectedGeneration} by one, writing {@code
   * artifact.promoted} and {@code canonical.advanced} with it; returns the new generation, or -1
   * when the project is not at {@code expectedGeneration} (a stale base).
   */
  public CompletableFuture<Long> advanceCanonical(
      long expectedGeneration, String candidateId, String changeId) {
    return transactWithEvents(
        (tx, out) -> {
          String tenant =
              tx.queryFirst(
                      "SELECT tenant_id FROM projects WHERE project_id = ?",
                      rs -> rs.getString(1),
                      projectId())
                  .orElseThrow(() -> new IllegalStateException("no project " + projectId()));
          int moved =
              tx.update(
                  "UPDATE projects SET canonical_generation = canonical_generation + 1,"
                      + " updated_at_ms = ? WHERE project_id = ? AND canonical_generation = ?",
                  clock().millis(),
                  projectId(),
                  expectedGeneration);
          if (moved == 0) {
            return -1L;
          }
          long generation = expectedGeneration + 1;
          var promoted = event(tenant, EventType.ARTIFACT_PROMOTED, generation, changeId);
          promoted.payload(payload("candidateId", candidateId));
          String promotedId = StableIds.randomEventId(clock().instant());
          out.append(promoted.eventId(promotedId).build());
          var advanced = event(tenant, EventType.CANONICAL_ADVANCED, generation, changeId);
          advanced.payload(payload("candidateId", candidateId)).causedBy(promotedId);
          out.append(advanced.build());
          return generation;
        });
  }

  /** What {@link #decidePromotion} decided. */
  public enum Promotion {
    /** The generation advanced: {@code artifact.promoted} and {@code canonical.advanced}. */
    PROMOTED,
    /** This Candidate was promoted before (a repeat): nothing written. */
    ALREADY_PROMOTED,
    /** The project is not at the Candidate's base generation any more: nothing written. */
    STALE_BASE,
    /** The project is archived or deleted: nothing of it is promoted, nothing written. */
    PROJECT_NOT_ACTIVE
  }

  /** The decision and the generation it leaves the project at. */
  public record PromotionDecision(Promotion promotion, long generation) {}

  /** What a promotion reads of the project's row. */
  private record ProjectRow(String tenantId, long canonicalGeneration, ProjectStatus status) {}

  /**
   * The seed's {@code decidePromotion(candidateId, expectedGeneration)}: promotes the Candidate
   * when the project is at {@code expectedGeneration} (generation + 1, {@code artifact.promoted}
   * and {@code canonical.advanced}, and a {@code promotions} row); a Candidate promoted before is
   * {@code already_promoted}, one on an older base {@code stale_base}. An archived or deleted
   * project's generation never advances: {@code project_not_active}.
   */
  public CompletableFuture<PromotionDecision> decidePromotion(
      String candidateId, long expectedGeneration, String changeId, String causedBy) {
    return transactWithEvents(
        (tx, out) -> {
          var before =
              tx.queryFirst(
                  "SELECT generation FROM promotions WHERE candidate_id = ?",
                  rs -> rs.getLong(1),
                  candidateId);
          if (before.isPresent()) {
            return new PromotionDecision(Promotion.ALREADY_PROMOTED, before.get());
          }
          ProjectRow project =
              tx.queryFirst(
                      "SELECT tenant_id, canonical_generation, status FROM projects"
                          + " WHERE project_id = ?",
                      rs ->
                          new ProjectRow(
                              rs.getString(1),
                              rs.getLong(2),
                              ProjectStatus.fromDb(rs.getString(3))),
                      projectId())
                  .orElseThrow(() -> new IllegalStateException("no project " + projectId()));
          long current = project.canonicalGeneration();
          if (project.status() != ProjectStatus.ACTIVE) {
            return new PromotionDecision(Promotion.PROJECT_NOT_ACTIVE, current);
          }
          if (current != expectedGeneration) {
            return new PromotionDecision(Promotion.STALE_BASE, current);
          }
          long generation = current + 1;
          long now = clock().millis();
          // The status is set by the project's shard, not here: a delete that commits between
          // the read and this update leaves the row unchanged (PostgreSQL re-checks the WHERE).
          int updated =
              tx.update(
                  "UPDATE projects SET canonical_generation = ?, updated_at_ms = ?"
                      + " WHERE project_id = ? AND canonical_generation = ? AND status = ?",
                  generation,
                  now,
                  projectId(),
                  current,
                  ProjectStatus.ACTIVE.dbName());
          if (updated == 0) {
            return new PromotionDecision(Promotion.PROJECT_NOT_ACTIVE, current);
          }
          tx.update(
              "INSERT INTO promotions (candidate_id, project_id, change_id, generation,"
                  + " promoted_at_ms) VALUES (?, ?, ?, ?, ?)",
              candidateId,
              projectId(),
              changeId,
              generation,
              now);
          var promoted =
              event(project.tenantId(), EventType.ARTIFACT_PROMOTED, generation, changeId);
          promoted.payload(payload("candidateId", candidateId)).causedBy(causedBy);
          String promotedId = StableIds.randomEventId(clock().instant());
          out.append(promoted.eventId(promotedId).correlationId(changeId).build());
          var advanced =
              event(project.tenantId(), EventType.CANONICAL_ADVANCED, generation, changeId);
          advanced.payload(payload("candidateId", candidateId)).causedBy(promotedId);
          out.append(advanced.correlationId(changeId).build());
          return new PromotionDecision(Promotion.PROMOTED, generation);
        });
  }

  private Event.Builder event(String tenantId, EventType type, Long generation, String changeId) {
    Instant now = clock().instant();
    String id = StableIds.randomEventId(now);
    return Event.builder()
        .eventId(id)
        .eventType(type)
        .tenantId(tenantId)
        .projectId(projectId())
        .changeId(changeId)
        .actor(writerId())
        .canonicalGeneration(generation)
        .correlationId(id)
        .timestamp(now);
  }

  private static com.fasterxml.jackson.databind.node.ObjectNode payload(String key, String value) {
    var node = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
    node.put(key, value);
    return node;
  }
}
