package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PullSubscribeOptions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.agents.WakeConsumer;
import org.rhumbatron.coordinator.project.ProjectRootActor.Promotion;
import org.rhumbatron.coordinator.project.ProjectRootActor.PromotionDecision;
import org.rhumbatron.coordinator.shard.ResourceShardActor;
import org.rhumbatron.coordinator.view.ProjectView;
import org.rhumbatron.integration.IntegrationConsumer;
import org.rhumbatron.integration.SimulatedVerifier;
import org.rhumbatron.integration.Workflows;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.LifecycleFixture;
import org.rhumbatron.lifecycle.LifecycleIds;
import org.rhumbatron.lifecycle.candidates.Approval;
import org.rhumbatron.lifecycle.candidates.Composition;
import org.rhumbatron.lifecycle.changes.ChangeCreated;
import org.rhumbatron.lifecycle.changes.Dispatched;
import org.rhumbatron.lifecycle.changes.Wake;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.lifecycle.changes.WorkGraph.TaskSpec;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.lifecycle.workflow.WorkflowEngine;
import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.bucket.BucketObject;
import org.rhumbatron.platform.bucket.DirectoryBucket;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.eventlog.EventLogClient;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.JetStreamEventLog;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.platform.metrics.MetricsBinding;
import org.rhumbatron.platform.metrics.PlatformMetrics;
import org.rhumbatron.platform.queue.Delivery;
import org.rhumbatron.platform.queue.SendReceipt;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.DeadLetterMessage;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.protocol.StableIds;
import org.rhumbatron.router.archive.ArchiveKey;
import org.rhumbatron.router.archive.AuditArchiver;
import org.rhumbatron.router.causal.CausalRules;
import org.rhumbatron.router.causal.CommandCap;
import org.rhumbatron.router.claims.EventClaims;
import org.rhumbatron.router.deadletter.DeadLetterConsumer;
import org.rhumbatron.router.deadletter.DeadLetterOperator;
import org.rhumbatron.router.projector.ProjectViewProjector;
import org.rhumbatron.router.run.BatchFailures;
import org.rhumbatron.router.run.SubscriptionRun;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * The seed's idempotency table, one test per row, named after it: each retries at that boundary
 * (the same call or delivery twice, a redelivery by the server, or the repeat after a crash) and
 * finds one logical result. Every layer as core wires it, on a real nats-server and database; run
 * against SQLite and PostgreSQL.
 */
class IdempotencyTableTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @TempDir Path data;

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final String P = "p1";

  private final EnvelopeCodec codec = new EnvelopeCodec();
  private LifecycleFixture f;
  private Lifecycle lifecycle;
  private WorkflowEngine workflows;
  private IntegrationConsumer integration;
  private JetStreamEventLog streams;
  private EventLogClient eventLog;
  private ProjectViewProjector.Factory projector;

  @BeforeEach
  void start() throws Exception {
    f =
        new LifecycleFixture(
            nats.url(),
            db().url(),
            Map.of("verifier.simulated.duration", "0ms", "release.simulated.duration", "0ms"));
    lifecycle = f.lifecycle;
    // Runnable::run: a start runs its instance to its end before it returns.
    workflows = new WorkflowEngine(f.database, f.clock, Runnable::run, 3, Duration.ofMillis(10));
    Workflows.register(
        workflows,
        lifecycle,
        new SimulatedVerifier(f.settings),
        Workflows.simulatedReleaser(f.settings),
        f.commands,
        f.clock,
        false);
    integration =
        new IntegrationConsumer(
            lifecycle,
            workflows,
            f.commands,
            new DeadLetterOperator(f.database, f.commands, codec, f.clock)::supersedeForChange,
            f.clock,
            f.settings);
    streams = JetStreamEventLog.bind(f.connection);
    eventLog = new EventLogClient(f.connection, codec, f.settings);
    projector =
        new ProjectViewProjector.Factory(
            f.database,
            new EventClaims(f.clock),
            f.coordinator::view,
            f.clock,
            f.settings.get(Settings.APPLY_DELTA_CALLS_PER_RUN));
    f.project(P);
  }

  @AfterEach
  void stop() {
    workflows.close();
    f.close();
  }

  // Event publish | eventId | outbox.event_id UNIQUE; shard appendEvents uses INSERT OR IGNORE
  @DatabaseTest
  void eventPublish_eventIdUnique_aRepeatedAppendWritesOneOutboxRow() throws Exception {
    Event created = changeEvent(P, "chg_append", EventType.CHANGE_CREATED, null);
    ResourceShardActor shard = f.coordinator.changeEvents().shardFor(P, "change:chg_append");
    assertThat(shard.appendEvents(List.of(created)).get()).isEqualTo(1);
    assertThat(shard.appendEvents(List.of(created)).get()).as("the retried step").isZero();
    assertThat(f.outbox("change.created")).isEqualTo(1);
  }

  // Event consume | (consumer, event_id) | processed_events, INSERT OR IGNORE, kept 14 days
  @DatabaseTest
  void eventConsume_consumerAndEventIdClaim_aRedeliveredEventAppliesNothing() throws Exception {
    String project = onAnotherStream("p-consume");
    int stream = EventStreams.streamIndex(project);
    publish(
        changeEvent(project, "chg_c", EventType.CHANGE_CREATED, null),
        changeEvent(project, "chg_c", EventType.TASK_READY, "chg_c:a"),
        changeEvent(project, "chg_c", EventType.TASK_COMPLETED, "chg_c:a"));
    List<EventRecord> first = fetch(stream, Subscription.PROJECT_VIEW_PROJECTOR, 3);
    assertThat(projector.forRun().handle(stream, first).allRecordsApplied()).isTrue();
    // No ack reached the server: the batch comes again, with a fresh event of the same project,
    // so the view's transaction runs and only the claims tell the three repeats apart.
    first.forEach(r -> r.nak(Duration.ZERO));
    publish(changeEvent(project, "chg_c", EventType.TASK_READY, "chg_c:b"));
    List<EventRecord> again = fetch(stream, Subscription.PROJECT_VIEW_PROJECTOR, 4);
    assertThat(again).filteredOn(r -> r.deliveredCount() == 2).hasSize(3);
    assertThat(projector.forRun().handle(stream, again).allRecordsApplied()).isTrue();
    again.forEach(EventRecord::ack);
    assertThat(ProjectView.read(f.database, project).orElseThrow().eventsApplied()).isEqualTo(4);
    assertThat(f.count("SELECT COUNT(*) FROM project_events WHERE project_id = ?", project))
        .isEqualTo(4);
    assertThat(
            f.count(
                "SELECT COUNT(*) FROM processed_events WHERE consumer = ?",
                Subscription.PROJECT_VIEW_PROJECTOR.durableName()))
        .isEqualTo(4);
  }

  // Wake command | cmd_<task>_ready (dispatch), cmd_<event>_<task> (router) |
  // Wake consumer treats a ready wake for a Task that the same Agent holds as a duplicate;
  // admitAgent assigns once
  @DatabaseTest
  void wakeCommand_readyAndRouterWakeIds_aRepeatedWakeWakesTheAgentOnce() throws Exception {
    String c = change("r1", task("a"));
    Dispatched first = lifecycle.changes().dispatch(c, "cmd_e1_dispatch").get();
    Dispatched again = lifecycle.changes().dispatch(c, "cmd_e1_dispatch").get(); // redelivered
    assertThat(again.admitted()).as("admitAgent assigns once").isZero();
    Command ready = send(first.wakes().get(0));
    assertThat(send(again.wakes().get(0)).commandId())
        .isEqualTo(ready.commandId())
        .isEqualTo("cmd_" + c + ":a_ready");
    List<Command> routed = routeCanonicalAdvancedTwice();
    assertThat(routed)
        .hasSize(2)
        .extracting(Command::commandId)
        .containsOnly(routed.get(0).commandId());
    assertThat(f.commandsOn(Queue.AGENT_WAKEUPS))
        .as("one ready wake, one router wake")
        .isEqualTo(2);

    List<TaskRef> handedOut = new CopyOnWriteArrayList<>();
    WakeConsumer consumer =
        new WakeConsumer(
            lifecycle,
            ref -> {
              handedOut.add(ref);
              lifecycle.agents().start(ref).join(); // the Agent runs it
            },
            new PlatformMetrics(f.database, f.clock, MetricsBinding.METRICS));
    for (Command wake : List.of(ready, ready, routed.get(0))) {
      consumer.handle(wake, delivery(Queue.AGENT_WAKEUPS, 1));
    }
    assertThat(handedOut).hasSize(1);
    assertThat(f.outbox("task.assigned")).isEqualTo(1);
    // Each wake command once: the ready wake, and the router's wake of the running Agent.
    assertThat(f.outbox("agent.woken")).isEqualTo(2);
    assertThat(f.outbox("task.running")).isEqualTo(1);
    assertThat(f.count("SELECT COUNT(*) FROM platform_metrics WHERE name = 'false_wakeup'"))
        .as("a duplicate, not a false wakeup")
        .isZero();
  }

  // Dead-letter record | command_id | dead_letters, UNIQUE
  @DatabaseTest
  void deadLetterRecord_commandIdUnique_aRedeliveredDeadLetterWritesOneRow() throws Exception {
    String c = change("r1", task("a"));
    Wake wake = lifecycle.changes().dispatch(c, "cmd_d").get().wakes().get(0);
    DeadLetterMessage dl =
        new DeadLetterMessage(
            Queue.AGENT_WAKEUPS,
            4,
            "agent runtime refused",
            new String(
                codec.encodeCommand(wake.command(f.clock.instant())), StandardCharsets.UTF_8),
            f.clock.instant());
    DeadLetterConsumer consumer =
        new DeadLetterConsumer(f.database, f.coordinator.changeEvents(), codec, f.clock);
    assertThat(consumer.record(dl)).isEqualTo(DeadLetterConsumer.Recorded.TASK_BLOCKED);
    assertThat(consumer.record(dl)).isEqualTo(DeadLetterConsumer.Recorded.DUPLICATE);
    assertThat(f.count("SELECT COUNT(*) FROM dead_letters")).isEqualTo(1);
    assertThat(f.outbox("task.failed")).isEqualTo(1);
  }

  // Change creation | (project_id, client_request_id) |
  // Unique constraint and ON CONFLICT DO NOTHING
  @DatabaseTest
  void changeCreation_projectIdAndClientRequestId_aRepeatedRequestReturnsTheFirstChange()
      throws Exception {
    WorkGraph graph = WorkGraph.of(task("a"), task("b", "a"));
    ChangeCreated first = lifecycle.changes().create(P, "req-1", graph).get();
    ChangeCreated again = lifecycle.changes().create(P, "req-1", graph).get();
    assertThat(first.created()).isTrue();
    assertThat(again.created()).isFalse();
    assertThat(again.change().changeId())
        .isEqualTo(first.change().changeId())
        .isEqualTo(LifecycleIds.changeId(P, "req-1"));
    assertThat(f.count("SELECT COUNT(*) FROM changes WHERE project_id = ?", P)).isEqualTo(1);
    assertThat(f.count("SELECT COUNT(*) FROM tasks")).isEqualTo(2);
    assertThat(f.outbox("change.created")).isEqualTo(1);
  }

  // Workflow start | Instance ID = Change ID, Candidate ID, or release ID |
  // The workflow engine rejects a second instance with the same ID
  @DatabaseTest
  void workflowStart_instanceId_aSecondStartWithTheSameIdIsAlreadyStarted() throws Exception {
    String c = verifying("r1");
    String cand = lifecycle.approvals().compose(c, "cmd_cc", false).get().candidateId();
    ObjectNode input =
        JsonNodeFactory.instance
            .objectNode()
            .put("projectId", P)
            .put("changeId", c)
            .put("candidateId", cand)
            .put("commandId", StableIds.verify(cand));
    assertThat(workflows.start(Workflows.VERIFICATION, cand, input))
        .isEqualTo(WorkflowEngine.Start.STARTED);
    assertThat(workflows.start(Workflows.VERIFICATION, cand, input))
        .isEqualTo(WorkflowEngine.Start.ALREADY_STARTED);
    assertThat(f.count("SELECT COUNT(*) FROM workflow_instances")).isEqualTo(1);
    assertThat(workflows.instance(cand).orElseThrow().stepsDone())
        .containsExactly("verify", "record", "approve");
    assertThat(f.outbox("candidate.verified")).isEqualTo(1);
  }

  // Workflow start command | cmd_<candidate>_verify, cmd_<release>_release |
  // workflowStartFor maps the command to that instance ID
  @DatabaseTest
  void workflowStartCommand_verifyCommandId_aRedeliveredStartRunsOneInstance() throws Exception {
    String c = verifying("r1");
    Command create = changeCommand(CommandType.CANDIDATE_CREATE, c, "cmd_e2_candidate");
    integration.handle(create, delivery(Queue.VERIFICATION, 1));
    integration.handle(create, delivery(Queue.VERIFICATION, 2)); // sends verification.start again
    assertThat(f.commandsOn(Queue.VERIFICATION)).isEqualTo(1);
    Command start = takeOne(Queue.VERIFICATION);
    String cand = candidateOf(c);
    assertThat(start.commandId()).isEqualTo("cmd_" + cand + "_verify");
    assertThat(Workflows.workflowStartFor(start).orElseThrow().instanceId()).isEqualTo(cand);
    integration.handle(start, delivery(Queue.VERIFICATION, 1));
    integration.handle(start, delivery(Queue.VERIFICATION, 2));
    assertThat(f.count("SELECT COUNT(*) FROM workflow_instances")).isEqualTo(1);
    assertThat(workflows.instance(cand)).isPresent();
    assertThat(f.outbox("candidate.verified")).isEqualTo(1);
  }

  // Candidate composition | SHA-256 composition key | Candidate ID derives from the key
  @DatabaseTest
  void candidateComposition_sha256CompositionKey_aRedeliveredCreateFindsTheSameCandidate()
      throws Exception {
    String c = verifying("r1");
    Composition first = lifecycle.approvals().compose(c, "cmd_e3_candidate", false).get();
    Composition again = lifecycle.approvals().compose(c, "cmd_e3_candidate", false).get();
    assertThat(first.created()).isTrue();
    assertThat(again.created()).isFalse();
    assertThat(again.candidateId()).isEqualTo(first.candidateId());
    List<String> changesets =
        lifecycle.changes().tasks(c).stream()
            .map(t -> LifecycleIds.changesetId(t.taskId(), t.attempt()))
            .toList();
    // Literal vectors, computed once by production code: the Change of (p1, r1), its two Tasks'
    // first changesets, base generation 0; the id is the first 32 hex digits of the key
    // 4f47933759e9b13bfb8594eae0cea7237c9febc74a87784abfa5a09563834b00.
    assertThat(c).isEqualTo("chg_ee8e17c48e098f4c5956751692151530");
    assertThat(changesets).containsExactlyInAnyOrder("cs_74e754c09dafa67f", "cs_8e556ada5cc95608");
    assertThat(first.candidateId()).isEqualTo("cand_4f47933759e9b13bfb8594eae0cea723");
    assertThat(f.count("SELECT COUNT(*) FROM candidates")).isEqualTo(1);
    assertThat(f.outbox("candidate.created")).isEqualTo(1);
  }

  // Promotion | Candidate ID + expected generation | decidePromotion returns already_promoted
  @DatabaseTest
  void promotion_candidateIdAndExpectedGeneration_aRepeatIsAlreadyPromoted() throws Exception {
    String c = verifying("r1");
    String cand = verified(c);
    assertThat(lifecycle.approvals().approve(c).get().promotion()).isEqualTo(Promotion.PROMOTED);
    PromotionDecision again =
        f.coordinator.root(P).decidePromotion(cand, 0, c, "approve:" + cand).get();
    assertThat(again).isEqualTo(new PromotionDecision(Promotion.ALREADY_PROMOTED, 1));
    assertThat(lifecycle.projects().project(P).orElseThrow().canonicalGeneration()).isEqualTo(1);
    assertThat(f.count("SELECT COUNT(*) FROM promotions")).isEqualTo(1);
    assertThat(f.outbox("artifact.promoted")).isEqualTo(1);
    assertThat(f.outbox("canonical.advanced")).isEqualTo(1);
  }

  // Release | rel_<project>_<generation> | releases primary key
  @DatabaseTest
  void release_projectAndGenerationReleaseId_aRetriedApprovalAndReleaseMakeOneRelease()
      throws Exception {
    lifecycle.projects().setLiveApp(P, true, "cmd_app").get();
    String c = verifying("r1");
    String cand = verified(c);
    // The approval's promotion committed, then core died before the Change moved on; the
    // operator approves again.
    f.coordinator.root(P).decidePromotion(cand, 0, c, "approve:" + cand).get();
    Approval retried = lifecycle.approvals().approve(c).get();
    assertThat(retried.promotion()).isEqualTo(Promotion.ALREADY_PROMOTED);
    assertThat(retried.releaseId()).isEqualTo(StableIds.releaseId(P, 1)).isEqualTo("rel_p1_1");
    Command start = lifecycle.commands().releaseStart(P, c, retried.releaseId());
    integration.handle(start, delivery(Queue.RELEASE, 1));
    integration.handle(start, delivery(Queue.RELEASE, 2));
    // The record step again, as after a crash before the engine stored its result.
    assertThat(lifecycle.approvals().recordRelease(retried.releaseId(), true, null, "again").get())
        .isFalse();
    assertThat(f.commandsOn(Queue.RELEASE)).isEqualTo(1);
    assertThat(f.count("SELECT COUNT(*) FROM workflow_instances")).isEqualTo(1);
    assertThat(f.count("SELECT COUNT(*) FROM releases")).isEqualTo(1);
    assertThat(f.count("SELECT COUNT(*) FROM releases WHERE state = 'completed'")).isEqualTo(1);
    assertThat(f.outbox("change.releasing")).isEqualTo(1);
    assertThat(f.outbox("release.completed")).isEqualTo(1);
    assertThat(lifecycle.changes().change(c).orElseThrow().state()).isEqualTo("completed");
  }

  // Event batch failure | (consumer, batch_key) | k2_batch_failures
  @DatabaseTest
  void eventBatchFailure_consumerAndBatchKey_everyRedeliveryCountsOnOneRow() throws Exception {
    String project = onAnotherStream("p-poison");
    int stream = EventStreams.streamIndex(project);
    // A valid envelope the view cannot apply: a task.ready without its Task.
    Event poison = changeEvent(project, "chg_poison", EventType.TASK_READY, null);
    publish(poison);
    int limit = f.settings.get(Settings.BATCH_FAILURE_LIMIT);
    SubscriptionRun run =
        new SubscriptionRun(
            eventLog,
            new BatchFailures(f.database, new EventClaims(f.clock), f.clock, limit),
            Duration.ofMillis(50));
    await().atMost(WAIT).until(() -> run.consume(stream, projector.forRun()).deadLettered());
    String consumer = Subscription.PROJECT_VIEW_PROJECTOR.durableName();
    List<String> rows =
        f.database.read(
            tx ->
                tx.query(
                    "SELECT consumer, batch_key, failures FROM k2_batch_failures",
                    rs -> rs.getString(1) + " " + rs.getString(2) + " " + rs.getLong(3)));
    assertThat(rows).containsExactly(consumer + " " + poison.eventId() + " " + limit);
    assertThat(f.count("SELECT COUNT(*) FROM dead_letters WHERE kind = 'event_batch'"))
        .isEqualTo(1);
    assertThat(run.consume(stream, projector.forRun()).fetched()).as("acked").isZero();
  }

  // Event archive object | Event IDs of the batch |
  // Same key, so a redelivery overwrites the same object
  @DatabaseTest
  void eventArchiveObject_eventIdsOfTheBatch_aRedeliveredBatchKeepsItsOneObject() throws Exception {
    String project = onAnotherStream("p-archive");
    int stream = EventStreams.streamIndex(project);
    publish(
        changeEvent(project, "chg_a", EventType.CHANGE_CREATED, null),
        changeEvent(project, "chg_a", EventType.TASK_READY, "chg_a:a"));
    Bucket bucket = DirectoryBucket.open(data, Bucket.EVIDENCE, f.clock);
    AuditArchiver archiver = new AuditArchiver(bucket, codec, f.database, new EventClaims(f.clock));
    List<EventRecord> first = fetch(stream, Subscription.AUDIT_ARCHIVER, 2);
    assertThat(archiver.handle(stream, first).allRecordsApplied()).isTrue();
    List<EventRecord> again = redelivered(stream, Subscription.AUDIT_ARCHIVER, first);
    assertThat(archiver.handle(stream, again).allRecordsApplied()).isTrue();
    again.forEach(EventRecord::ack);
    assertThat(bucket.list(ArchiveKey.PREFIX))
        .extracting(BucketObject::key)
        .containsExactly(ArchiveKey.of(stream, first));
  }

  // Command publish | <queue>:<commandId> | JetStream message ID, 2-hour duplicate window
  @DatabaseTest
  void commandPublish_queueAndCommandIdMessageId_aRepeatedSendStoresOneMessage() throws Exception {
    Command dispatch = changeCommand(CommandType.CHANGE_DISPATCH, "chg_x", "cmd_e4_dispatch");
    SendReceipt first = f.commands.send(dispatch).get();
    SendReceipt again = f.commands.send(dispatch).get(); // the PubAck was lost: sent again
    assertThat(first.messageId()).isEqualTo("integration:cmd_e4_dispatch");
    assertThat(again.duplicate()).isTrue();
    assertThat(again.streamSequence()).isEqualTo(first.streamSequence());
    assertThat(
            f.connection
                .jetStreamManagement()
                .getStreamInfo(Queue.STREAM_NAME)
                .getStreamState()
                .getMsgCount())
        .isEqualTo(1);
  }

  // Event stream publish | event-id header | JetStream message ID, 2-hour duplicate window
  @DatabaseTest
  void eventStreamPublish_eventIdHeader_aRepeatedPublishStoresOneMessage() throws Exception {
    String project = onAnotherStream("p-stream");
    int stream = EventStreams.streamIndex(project);
    Event e = changeEvent(project, "chg_s", EventType.CHANGE_CREATED, null);
    long seq = streams.publish(stream, e.eventId(), codec.encodeEvent(e), null).get();
    // The PubAck was lost: the publisher (or the lost-tail repair) sends the row again.
    long again = streams.publish(stream, e.eventId(), codec.encodeEvent(e), null).get();
    assertThat(again).isEqualTo(seq);
    assertThat(
            f.connection
                .jetStreamManagement()
                .getStreamInfo(EventStreams.streamName(stream))
                .getStreamState()
                .getMsgCount())
        .isEqualTo(1);
  }

  // Small parts ----------------------------------------------------------------------------

  private static TaskSpec task(String key, String... dependsOn) {
    return new TaskSpec(key, null, List.of(dependsOn), List.of("path:src/" + key + "/"));
  }

  private String change(String request, TaskSpec... tasks) throws Exception {
    return lifecycle.changes().create(P, request, WorkGraph.of(tasks)).get().change().changeId();
  }

  /** A Change of two Tasks run to verifying by its Agents. */
  private String verifying(String request) throws Exception {
    String c = change(request, task("a"), task("b", "a"));
    for (int round = 0; round < 5; round++) {
      Dispatched d = lifecycle.changes().dispatch(c, "cmd_" + request + "_" + round).get();
      if (d.verification()) {
        return c;
      }
      for (Wake w : d.wakes()) {
        lifecycle.agents().start(w.task()).get();
        lifecycle.agents().proposeChangeset(w.task()).get();
        lifecycle.agents().complete(w.task()).get();
      }
    }
    throw new AssertionError(c + " did not verify: " + lifecycle.changes().tasks(c));
  }

  /** Composes the verifying Change's Candidate and records its passing verdict. */
  private String verified(String changeId) throws Exception {
    String cand = lifecycle.approvals().compose(changeId, "cmd_cc", false).get().candidateId();
    assertThat(lifecycle.approvals().recordVerdict(cand, true, null, "cmd_v").get()).isTrue();
    return cand;
  }

  private String candidateOf(String changeId) {
    return f.database.read(
        tx ->
            tx.queryFirst(
                    "SELECT candidate_id FROM candidates WHERE change_id = ?",
                    rs -> rs.getString(1),
                    changeId)
                .orElseThrow());
  }

  private Command changeCommand(CommandType type, String changeId, String commandId) {
    return Command.builder()
        .commandId(commandId)
        .commandType(type)
        .projectId(P)
        .changeId(changeId)
        .createdAt(f.clock.instant())
        .build();
  }

  private static Delivery delivery(Queue queue, long deliveredCount) {
    return new Delivery(queue, deliveredCount, 1, Instant.EPOCH, null);
  }

  private Command send(Wake wake) throws Exception {
    Command c = wake.command(f.clock.instant());
    f.commands.send(c).get();
    return c;
  }

  /**
   * canonical.advanced routed twice, as after a send failure rolled its claim back: the router
   * wakes the Agents holding Tasks ({@code cmd_<event>_<task>}) each time. Returns the wakes sent.
   */
  private List<Command> routeCanonicalAdvancedTwice() {
    List<Command> wakes = new CopyOnWriteArrayList<>();
    CausalRules rules =
        new CausalRules(
            c -> {
              if (c.commandType() == CommandType.AGENT_WAKE) {
                wakes.add(c);
              }
              return f.commands.send(c);
            },
            f.clock,
            f.lifecycle,
            (e, m) -> {
              throw new AssertionError("canonical.advanced asks no model");
            },
            new CommandCap(
                1_000, f.clock, new PlatformMetrics(f.database, f.clock, MetricsBinding.METRICS)));
    Event advanced =
        Event.builder()
            .eventId(StableIds.randomEventId(f.clock.instant()))
            .eventType(EventType.CANONICAL_ADVANCED)
            .tenantId("tenant-1")
            .projectId(P)
            .actor("test")
            .canonicalGeneration(1L)
            .correlationId(P)
            .timestamp(f.clock.instant())
            .payload(JsonNodeFactory.instance.objectNode())
            .build();
    for (int delivery = 1; delivery <= 2; delivery++) {
      f.database.inTransaction(
          tx -> {
            rules.routeCausalBatch(tx, List.of(advanced));
            return null;
          });
    }
    return wakes;
  }

  /** The one message on {@code queue}, read by a pull subscription of its own. */
  private Command takeOne(Queue queue) throws Exception {
    JetStreamSubscription sub =
        f.connection
            .jetStream()
            .subscribe(
                queue.subject(), PullSubscribeOptions.builder().stream(Queue.STREAM_NAME).build());
    List<Message> got = sub.fetch(1, Duration.ofSeconds(5));
    assertThat(got).hasSize(1);
    return codec.decodeCommand(got.get(0).getData());
  }

  /** A project id whose stream is not P's, so only this test writes to that stream. */
  private static String onAnotherStream(String prefix) {
    for (int i = 0; ; i++) {
      String id = prefix + "-" + i;
      if (EventStreams.streamIndex(id) != EventStreams.streamIndex(P)) {
        return id;
      }
    }
  }

  private Event changeEvent(String projectId, String changeId, EventType type, String taskId) {
    return Event.builder()
        .eventId(StableIds.stableEventId(changeId, type, taskId))
        .eventType(type)
        .tenantId("tenant-1")
        .projectId(projectId)
        .changeId(changeId)
        .taskId(taskId)
        .actor("test")
        .correlationId(changeId)
        .timestamp(f.clock.instant())
        .payload(JsonNodeFactory.instance.objectNode())
        .build();
  }

  /** Publishes {@code events} as the outbox publisher does (message id = event id). */
  private void publish(Event... events) throws Exception {
    for (Event e : events) {
      streams
          .publish(EventStreams.streamIndex(e.projectId()), e.eventId(), codec.encodeEvent(e), null)
          .get();
    }
  }

  /** Fetches until {@code n} records of {@code subscription} arrived, in stream order. */
  private List<EventRecord> fetch(int stream, Subscription subscription, int n) {
    List<EventRecord> got = new ArrayList<>();
    await()
        .atMost(WAIT)
        .until(
            () -> {
              got.addAll(eventLog.fetch(stream, subscription, 100));
              return got.size() >= n;
            });
    assertThat(got).hasSize(n);
    got.sort(Comparator.comparingLong(EventRecord::streamSequence));
    return got;
  }

  /** Nacks {@code batch} and fetches its redelivery from the server. */
  private List<EventRecord> redelivered(
      int stream, Subscription subscription, List<EventRecord> batch) {
    batch.forEach(r -> r.nak(Duration.ZERO));
    List<EventRecord> again = fetch(stream, subscription, batch.size());
    assertThat(again).allSatisfy(r -> assertThat(r.deliveredCount()).isEqualTo(2));
    return again;
  }
}
