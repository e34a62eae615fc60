package org.rhumbatron.router.analytics;

import java.util.Optional;
import org.rhumbatron.protocol.EventType;

/**
 * The metric name of each lifecycle Event type (the seed: change_created, task_*, agent_wakeup,
 * model_route, candidate_*, promotion_*, release_completed, ...). The state changes of Projects,
 * Changes, Tasks, Candidates, promotions and releases count, and so do wakeups and model routes.
 * Resource coordination facts (intents, challenges, changesets, claims) are not lifecycle and give
 * no point. The switch has no default, so a new Event type does not compile until it is decided.
 */
public final class EventMetricNames {
  private EventMetricNames() {}

  /** The metric of {@code type}, or empty when the type gives no data point. */
  public static Optional<String> of(EventType type) {
    return Optional.ofNullable(
        switch (type) {
          case PROJECT_CREATED -> "project_created";
          case PROJECT_ARCHIVED -> "project_archived";
          case PROJECT_DELETED -> "project_deleted";
          case APP_PROVISIONED -> "app_provisioned";
          case APP_REMOVED -> "app_removed";
          case CHANGE_CREATED -> "change_created";
          case CHANGE_VERIFYING -> "change_verifying";
          case CHANGE_REOPENED -> "change_reopened";
          case CHANGE_AWAITING_APPROVAL -> "change_awaiting_approval";
          case CHANGE_RELEASING -> "change_releasing";
          case CHANGE_COMPLETED -> "change_completed";
          case CHANGE_FAILED -> "change_failed";
          case CHANGE_CANCELLED -> "change_cancelled";
          case CHANGE_DECLINED -> "change_declined";
          case CHANGE_NOT_SELECTED -> "change_not_selected";
          case TASK_READY -> "task_ready";
          case TASK_ASSIGNED -> "task_assigned";
          case TASK_RUNNING -> "task_running";
          case TASK_COMPLETED -> "task_completed";
          case TASK_FAILED -> "task_failed";
          case TASK_BLOCKED -> "task_blocked";
          case TASK_CANCELLED -> "task_cancelled";
          case VERIFICATION_STARTED -> "verification_started";
          case CANDIDATE_CREATED -> "candidate_created";
          case CANDIDATE_VERIFIED -> "candidate_verified";
          case CANDIDATE_REJECTED -> "candidate_rejected";
          case CANDIDATE_STALE -> "candidate_stale";
          case CANDIDATE_PROMOTED -> "candidate_promoted";
          case ARTIFACT_PROMOTED -> "promotion_artifact_promoted";
          case CANONICAL_ADVANCED -> "promotion_canonical_advanced";
          case RELEASE_STARTED -> "release_started";
          case RELEASE_COMPLETED -> "release_completed";
          case RELEASE_FAILED -> "release_failed";
          case AGENT_WOKEN -> "agent_wakeup";
          case MODEL_ROUTED -> "model_route";
          case INTENT_DECLARED,
              INTENT_CHANGED,
              CHALLENGE_CREATED,
              CHANGESET_PROPOSED,
              CLAIM_ACQUIRED,
              CLAIM_RELEASED,
              CLAIM_EXPIRED ->
              null;
        });
  }
}
