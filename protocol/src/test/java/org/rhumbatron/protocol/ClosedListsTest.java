package org.rhumbatron.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The closed lists hold every name of the seed, with the seed's attributes. */
class ClosedListsTest {

  /** Every Event type the seed's text names. */
  private static final List<String> SEED_EVENT_TYPES =
      List.of(
          "task.ready",
          "task.completed",
          "task.failed",
          "verification.started",
          "canonical.advanced",
          "artifact.promoted",
          "project.created",
          "intent.declared",
          "intent.changed",
          "challenge.created",
          "changeset.proposed",
          "claim.released",
          "claim.expired",
          "claim.acquired",
          "candidate.verified",
          "candidate.rejected",
          "release.completed");

  /** The lifecycle types. */
  private static final List<String> LIFECYCLE_EVENT_TYPES =
      List.of(
          "change.created",
          "task.assigned",
          "task.running",
          "task.blocked",
          "task.cancelled",
          "candidate.created",
          "candidate.stale",
          "candidate.promoted",
          "change.verifying",
          "change.reopened",
          "change.awaiting_approval",
          "change.releasing",
          "change.completed",
          "change.failed",
          "change.cancelled",
          "change.declined",
          "change.not_selected",
          "release.started",
          "app.provisioned",
          "app.removed",
          "project.archived",
          "project.deleted",
          "agent.woken",
          "model.routed");

  @Test
  void eventTypesCoverTheSeedAndTheLifecycle() {
    assertThat(wireNames()).containsAll(SEED_EVENT_TYPES).containsAll(LIFECYCLE_EVENT_TYPES);
    assertThat(wireNames()).doesNotHaveDuplicates();
  }

  @Test
  void resourceEventsAreExactlyTheSeedsSix() {
    assertThat(ofKind(EventType.Kind.RESOURCE))
        .containsExactlyInAnyOrder(
            "intent.declared",
            "intent.changed",
            "challenge.created",
            "changeset.proposed",
            "claim.released",
            "claim.expired");
  }

  @Test
  void routedEventsAreTheCausalRoutersBranches() {
    assertThat(ofKind(EventType.Kind.ROUTED))
        .containsExactlyInAnyOrder(
            "change.created", // a new Change's first change.dispatch (not a seed branch)
            "task.ready",
            "task.completed",
            "task.failed",
            "verification.started",
            "canonical.advanced",
            "artifact.promoted");
  }

  @Test
  void theProjectRootWritesExactlyThreeTypes() {
    assertThat(
            Arrays.stream(EventType.values())
                .filter(t -> t.writer() == EventType.Writer.ROOT)
                .map(EventType::wireName))
        .containsExactlyInAnyOrder("project.created", "artifact.promoted", "canonical.advanced");
  }

  @ParameterizedTest
  @EnumSource(EventType.class)
  void eventWireNamesRoundTrip(EventType type) {
    assertThat(EventType.fromWire(type.wireName())).isSameAs(type);
    assertThat(type.wireName()).matches("[a-z_]+\\.[a-z_]+");
  }

  @Test
  void unknownNamesThrowATypedError() {
    EnvelopeException event =
        catchThrowableOfType(EnvelopeException.class, () -> EventType.fromWire("task.exploded"));
    EnvelopeException command =
        catchThrowableOfType(EnvelopeException.class, () -> CommandType.fromWire("TASK.READY"));
    EnvelopeException queue =
        catchThrowableOfType(EnvelopeException.class, () -> Queue.fromWire("cmd.release"));
    EnvelopeException none =
        catchThrowableOfType(EnvelopeException.class, () -> EventType.fromWire(null));

    assertThat(event.field()).isEqualTo("/eventType");
    assertThat(event.rule()).isEqualTo(EnvelopeException.ENUM);
    assertThat(event.getMessage()).contains("task.exploded");
    assertThat(command.field()).isEqualTo("/commandType");
    assertThat(queue.field()).isEqualTo("queue");
    assertThat(none.rule()).isEqualTo(EnvelopeException.REQUIRED);
  }

  @Test
  void commandQueuesFollowTheSeedsDiagram() {
    Map<String, String> queues =
        Arrays.stream(CommandType.values())
            .collect(Collectors.toMap(CommandType::wireName, t -> t.queue().wireName()));

    assertThat(queues)
        .containsExactlyInAnyOrderEntriesOf(
            Map.ofEntries(
                Map.entry("agent.wake", "agent-wakeups"),
                Map.entry("change.dispatch", "integration"),
                Map.entry("candidate.create", "integration"),
                Map.entry("change.settle", "integration"),
                Map.entry("candidates.recompose", "integration"),
                Map.entry("forks.sweep", "integration"),
                Map.entry("project.cleanup", "integration"),
                Map.entry("release.recover", "integration"),
                Map.entry("project.provision", "integration"),
                Map.entry("app.provision", "integration"),
                Map.entry("app.remove", "integration"),
                Map.entry("index.build", "indexing"),
                Map.entry("index.purge", "indexing"),
                Map.entry("verification.start", "verification"),
                Map.entry("release.start", "release")));
  }

  @Test
  void theCapCountsExactlyFourCommands() {
    assertThat(
            Arrays.stream(CommandType.values())
                .filter(CommandType::countsTowardChangeCap)
                .map(CommandType::wireName))
        .containsExactlyInAnyOrder(
            "change.dispatch", "candidate.create", "change.settle", "agent.wake");
  }

  @Test
  void workflowsAndProjectlessCommands() {
    assertThat(Arrays.stream(CommandType.values()).filter(CommandType::startsWorkflow))
        .containsExactlyInAnyOrder(CommandType.VERIFICATION_START, CommandType.RELEASE_START);
    assertThat(Arrays.stream(CommandType.values()).filter(t -> !t.requiresProject()))
        .containsExactly(CommandType.FORKS_SWEEP);
  }

  @Test
  void retrySendsAgentWakeToAgentWakeupsAndTheRestToIntegration() {
    for (CommandType type : CommandType.values()) {
      assertThat(type.retryQueue())
          .as(type.wireName())
          .isEqualTo(type == CommandType.AGENT_WAKE ? Queue.AGENT_WAKEUPS : Queue.INTEGRATION);
    }
  }

  @Test
  void queuesHaveTheSeedsSubjectsAndConsumers() {
    assertThat(Arrays.stream(Queue.values()).map(Queue::subject))
        .containsExactly(
            "cmd.agent-wakeups",
            "cmd.integration",
            "cmd.verification",
            "cmd.release",
            "cmd.indexing",
            "cmd.dead-letter");
    assertThat(Queue.INTEGRATION.durableName()).isEqualTo("q-integration");
    assertThat(Queue.STREAM_NAME).isEqualTo("COMMANDS");
    assertThat(Arrays.stream(Queue.values()).filter(q -> !q.hasDeadLetterQueue()))
        .containsExactlyInAnyOrder(Queue.INDEXING, Queue.DEAD_LETTER);
    assertThat(Queue.fromWire("dead-letter")).isSameAs(Queue.DEAD_LETTER);
  }

  private static List<String> wireNames() {
    return Arrays.stream(EventType.values()).map(EventType::wireName).collect(Collectors.toList());
  }

  private static List<String> ofKind(EventType.Kind kind) {
    return Arrays.stream(EventType.values())
        .filter(t -> t.kind() == kind)
        .map(EventType::wireName)
        .collect(Collectors.toList());
  }
}
