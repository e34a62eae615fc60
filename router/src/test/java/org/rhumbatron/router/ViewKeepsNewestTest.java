package org.rhumbatron.router;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nats.client.JetStreamManagement;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.coordinator.view.ProjectView;
import org.rhumbatron.platform.eventlog.EventOrigin;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.platform.jetstream.JetStreamTopology;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * The project view keeps each item's newest state by stream sequence: a nacked batch comes back 30
 * s later, a killed core's held deliveries 5 minutes later, after newer Events of the same items
 * were applied, and they must not set the items back.
 */
class ViewKeepsNewestTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  @TempDir Path dataDir;

  private RouterFixture f;

  @AfterEach
  void close() throws Exception {
    if (f != null) {
      f.close();
    }
  }

  private static ObjectNode agent(String agentId) {
    return JsonNodeFactory.instance.objectNode().put("agentId", agentId);
  }

  private static Event canonical(String projectId, long generation) {
    return Event.builder()
        .eventId(StableIds.randomEventId())
        .eventType(EventType.CANONICAL_ADVANCED)
        .tenantId("tenant")
        .projectId(projectId)
        .resource("project:" + projectId)
        .canonicalGeneration(generation)
        .actor("test")
        .correlationId(projectId)
        .timestamp(Instant.parse("2026-12-02T10:00:00Z"))
        .payload(JsonNodeFactory.instance.objectNode())
        .build();
  }

  @DatabaseTest
  void anOlderEventAppliedAfterANewerOneDoesNotSetTheItemBack() throws Exception {
    f = new RouterFixture(nats.url(), db().url(), dataDir, Map.of());
    String p = "p-newest";
    List<Event> events =
        List.of(
            RouterEvents.event(p, "c1", null, EventType.CHANGE_CREATED, null),
            RouterEvents.event(p, "c1", "c1-t1", EventType.AGENT_WOKEN, agent("agt-1")),
            RouterEvents.event(p, "c1", "c1-t1", EventType.TASK_READY, null),
            RouterEvents.event(p, "c1", "c1-t1", EventType.TASK_COMPLETED, agent("agt-1")),
            canonical(p, 1),
            canonical(p, 2));
    f.publish(events);
    int stream = EventStreams.streamIndex(p);
    List<EventRecord> batch = f.eventLog.fetch(stream, Subscription.PROJECT_VIEW_PROJECTOR, 100);
    assertThat(batch).hasSize(6);
    assertThat(batch.get(3).streamSequence()).isGreaterThan(batch.get(2).streamSequence());

    // The newer Events first; the older ones come back later (a redelivery) and are applied then.
    Predicate<EventRecord> older =
        r -> {
          String id = r.event().eventId();
          return id.equals(events.get(1).eventId())
              || id.equals(events.get(2).eventId())
              || id.equals(events.get(4).eventId());
        };
    assertThat(
            f.projector
                .forRun()
                .handle(stream, batch.stream().filter(older.negate()).toList())
                .allRecordsApplied())
        .isTrue();
    assertThat(
            f.projector
                .forRun()
                .handle(stream, batch.stream().filter(older).toList())
                .allRecordsApplied())
        .isTrue();

    ProjectView view = ProjectView.read(f.database, p).orElseThrow();
    assertThat(view.eventsApplied()).isEqualTo(6);
    Map<String, String> states =
        view.items().stream()
            .collect(Collectors.toMap(i -> i.kind() + ":" + i.itemId(), ProjectView.Item::state));
    assertThat(states)
        .containsEntry("task:c1-t1", "completed")
        .containsEntry("agent:agt-1", "idle")
        .containsEntry("change:c1", "open");
    assertThat(view.canonicalGeneration()).isEqualTo(2L);
  }

  /** The project's items as {@code kind:id=state}. */
  private List<String> itemStates(String projectId) {
    return ProjectView.read(f.database, projectId).orElseThrow().items().stream()
        .map(i -> i.kind() + ":" + i.itemId() + "=" + i.state())
        .toList();
  }

  /** Publishes {@code e} as the outbox publisher does, from the outbox row {@code outboxSeq}. */
  private void publishFromOutbox(Event e, long outboxSeq) throws Exception {
    f.publisher
        .publish(
            EventStreams.streamIndex(e.projectId()),
            e.eventId(),
            f.codec.encodeEvent(e),
            null,
            new EventOrigin(null, outboxSeq))
        .get();
  }

  @DatabaseTest
  void anOlderEventSentAgainBehindANewerOneDoesNotSetTheItemBack() throws Exception {
    f = new RouterFixture(nats.url(), db().url(), dataDir, Map.of());
    String p = "p-resent";
    Event ready = RouterEvents.event(p, "c3", "c3-t1", EventType.TASK_READY, null);
    Event running = RouterEvents.event(p, "c3", "c3-t1", EventType.TASK_RUNNING, agent("agt-3"));
    Event completed =
        RouterEvents.event(p, "c3", "c3-t1", EventType.TASK_COMPLETED, agent("agt-3"));
    // The writer committed ready, running, completed (outbox seqs 1, 2, 3). A lost tail took
    // running from the stream and the repair sent it again, behind completed.
    publishFromOutbox(ready, 1);
    publishFromOutbox(completed, 3);
    publishFromOutbox(running, 2);
    int stream = EventStreams.streamIndex(p);
    List<EventRecord> batch = f.eventLog.fetch(stream, Subscription.PROJECT_VIEW_PROJECTOR, 100);
    assertThat(batch)
        .extracting(r -> r.event().eventType())
        .containsExactly(EventType.TASK_READY, EventType.TASK_COMPLETED, EventType.TASK_RUNNING);

    // Delivered in stream order, in two runs: running comes last, at the highest sequence.
    assertThat(f.projector.forRun().handle(stream, batch.subList(0, 2)).allRecordsApplied())
        .isTrue();
    assertThat(f.projector.forRun().handle(stream, batch.subList(2, 3)).allRecordsApplied())
        .isTrue();

    assertThat(ProjectView.read(f.database, p).orElseThrow().eventsApplied())
        .as("each Event applied once")
        .isEqualTo(3);
    assertThat(itemStates(p)).contains("task:c3-t1=completed", "agent:agt-3=idle");
  }

  @DatabaseTest
  void aNewerEventAtASequenceTheViewStoredForAnOlderOneMovesTheItem() throws Exception {
    f = new RouterFixture(nats.url(), db().url(), dataDir, Map.of());
    String p = "p-reused";
    int stream = EventStreams.streamIndex(p);
    publishFromOutbox(RouterEvents.event(p, "c4", "c4-t1", EventType.TASK_READY, null), 1);
    publishFromOutbox(
        RouterEvents.event(p, "c4", "c4-t1", EventType.TASK_RUNNING, agent("agt-4")), 2);
    List<EventRecord> before = f.eventLog.fetch(stream, Subscription.PROJECT_VIEW_PROJECTOR, 100);
    assertThat(f.projector.forRun().handle(stream, before).allRecordsApplied()).isTrue();

    // The server lost the stream: its sequences start again below the one the view stored.
    JetStreamManagement jsm = f.connection.jetStreamManagement();
    jsm.deleteStream(EventStreams.streamName(stream));
    new JetStreamTopology(jsm, f.settings).ensure();
    f.eventLog.ensureConsumer(stream, Subscription.PROJECT_VIEW_PROJECTOR);
    publishFromOutbox(
        RouterEvents.event(p, "c4", "c4-t1", EventType.TASK_COMPLETED, agent("agt-4")), 3);
    List<EventRecord> after = f.eventLog.fetch(stream, Subscription.PROJECT_VIEW_PROJECTOR, 100);
    assertThat(after).hasSize(1);
    assertThat(after.get(0).streamSequence()).isLessThan(before.get(1).streamSequence());
    assertThat(f.projector.forRun().handle(stream, after).allRecordsApplied()).isTrue();

    assertThat(ProjectView.read(f.database, p).orElseThrow().eventsApplied())
        .as("each Event applied once")
        .isEqualTo(3);
    assertThat(itemStates(p)).contains("task:c4-t1=completed", "agent:agt-4=idle");
  }

  @DatabaseTest
  void aNewerEventStillMovesAnItemSetByAnOlderOne() throws Exception {
    f = new RouterFixture(nats.url(), db().url(), dataDir, Map.of());
    String p = "p-forward";
    f.publish(
        List.of(
            RouterEvents.event(p, "c2", "c2-t1", EventType.TASK_READY, null),
            RouterEvents.event(p, "c2", "c2-t1", EventType.TASK_RUNNING, agent("agt-2"))));
    int stream = EventStreams.streamIndex(p);
    List<EventRecord> batch = f.eventLog.fetch(stream, Subscription.PROJECT_VIEW_PROJECTOR, 100);
    assertThat(f.projector.forRun().handle(stream, batch.subList(0, 1)).allRecordsApplied())
        .isTrue();
    assertThat(f.projector.forRun().handle(stream, batch.subList(1, 2)).allRecordsApplied())
        .isTrue();

    assertThat(itemStates(p)).contains("task:c2-t1=running", "agent:agt-2=active");
  }
}
