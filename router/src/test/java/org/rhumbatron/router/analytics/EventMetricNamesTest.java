package org.rhumbatron.router.analytics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.rhumbatron.protocol.EventType;

class EventMetricNamesTest {

  @Test
  void theSeedsExamplesMapToTheirNames() {
    assertThat(EventMetricNames.of(EventType.CHANGE_CREATED)).contains("change_created");
    assertThat(EventMetricNames.of(EventType.AGENT_WOKEN)).contains("agent_wakeup");
    assertThat(EventMetricNames.of(EventType.MODEL_ROUTED)).contains("model_route");
    assertThat(EventMetricNames.of(EventType.RELEASE_COMPLETED)).contains("release_completed");
  }

  @Test
  void theFamiliesOfTheSeedCoverEveryTaskCandidateAndPromotionType() {
    for (EventType type : EventType.values()) {
      String wire = type.wireName();
      Optional<String> name = EventMetricNames.of(type);
      if (wire.startsWith("task.")) {
        assertThat(name).as(wire).contains("task_" + wire.substring(5));
      }
      if (wire.startsWith("candidate.")) {
        assertThat(name).as(wire).contains("candidate_" + wire.substring(10));
      }
      if (wire.startsWith("change.")) {
        assertThat(name).as(wire).contains("change_" + wire.substring(7));
      }
    }
    assertThat(EventMetricNames.of(EventType.ARTIFACT_PROMOTED))
        .hasValueSatisfying(n -> assertThat(n).startsWith("promotion_"));
    assertThat(EventMetricNames.of(EventType.CANONICAL_ADVANCED))
        .hasValueSatisfying(n -> assertThat(n).startsWith("promotion_"));
  }

  @Test
  void resourceCoordinationFactsGiveNoPoint() {
    for (EventType type : EventType.values()) {
      if (type.kind() == EventType.Kind.RESOURCE) {
        assertThat(EventMetricNames.of(type)).as(type.wireName()).isEmpty();
      }
    }
    assertThat(Arrays.stream(EventType.values()).filter(t -> EventMetricNames.of(t).isEmpty()))
        .as("the only types without a point")
        .containsExactlyInAnyOrder(
            EventType.INTENT_DECLARED,
            EventType.INTENT_CHANGED,
            EventType.CHALLENGE_CREATED,
            EventType.CHANGESET_PROPOSED,
            EventType.CLAIM_ACQUIRED,
            EventType.CLAIM_RELEASED,
            EventType.CLAIM_EXPIRED);
  }

  @Test
  void namesAreUniqueSnakeCase() {
    Set<String> seen = new HashSet<>();
    Arrays.stream(EventType.values())
        .map(EventMetricNames::of)
        .flatMap(Optional::stream)
        .forEach(
            n -> {
              assertThat(n).matches("[a-z][a-z0-9_]*");
              assertThat(seen.add(n)).as(n).isTrue();
            });
    assertThat(seen).hasSize(EventType.values().length - 7);
  }
}
