package org.rhumbatron.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PullSubscribeOptions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.lifecycle.LifecycleFixture;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.lifecycle.changes.WorkGraph.TaskSpec;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.lifecycle.workflow.WorkflowEngine;
import org.rhumbatron.platform.queue.DatabaseHandlerRuns;
import org.rhumbatron.platform.queue.Delivery;
import org.rhumbatron.platform.queue.Outcome;
import org.rhumbatron.platform.queue.QueueConsumer;
import org.rhumbatron.platform.queue.QueueConsumerConfig;
import org.rhumbatron.platform.queue.QueueListener;
import org.rhumbatron.platform.queue.QueueRuntime;
import org.rhumbatron.platform.queue.QueueTimings;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.DeadLetterMessage;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.router.deadletter.DeadLetterOperator;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * The integration module's handlers on a real nats-server and database, SQLite and PostgreSQL: each
 * delivered twice changes the state once, writes each Event once and sends each command once; the
 * module's own delivery limits; bad input dead-lettered with a reason that names it.
 */
class IntegrationTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  private LifecycleFixture f;
  private IntegrationConsumer consumer;
  private WorkflowEngine workflows;
  private final List<AutoCloseable> running = new ArrayList<>();

  @BeforeEach
  void start() throws Exception {
    f =
        new LifecycleFixture(
            nats.url(),
            db().url(),
            Map.of("integration.rows-per-delivery", "10", "integration.more-work-delay", "200ms"));
    workflows = new WorkflowEngine(f.database, f.clock, Runnable::run, 3, Duration.ofMillis(10));
    Workflows.register(
        workflows,
        f.lifecycle,
        new SimulatedVerifier(f.settings.with(Map.of("verifier.simulated.duration", "0ms"))),
        Workflows.simulatedReleaser(f.settings.with(Map.of("release.simulated.duration", "0ms"))),
        f.commands,
        f.clock,
        false);
    consumer =
        new IntegrationConsumer(
            f.lifecycle,
            workflows,
            f.commands,
            new DeadLetterOperator(f.database, f.commands, new EnvelopeCodec(), f.clock)
                ::supersedeForChange,
            f.clock,
            f.settings);
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : running) {
      c.close();
    }
    f.close();
  }

  private static Delivery delivery(long n) {
    return new Delivery(Queue.INTEGRATION, n, 1, Instant.EPOCH, null);
  }

  private Command command(CommandType type, String projectId, String changeId, ObjectNode payload) {
    return Command.builder()
        .commandId("cmd_test_" + type.wireName() + "_" + (changeId == null ? projectId : changeId))
        .commandType(type)
        .projectId(projectId)
        .changeId(changeId)
        .createdAt(f.clock.instant())
        .payload(payload == null ? JsonNodeFactory.instance.objectNode() : payload)
        .build();
  }

  /** What a delivery could have changed: every table the handlers write, the outbox, the queues. */
  private String snapshot() throws Exception {
    return f.database.read(
            tx ->
                List.of(
                        tx.query(
                            "SELECT project_id || ':' || status || ':' || has_live_app FROM projects"
                                + " ORDER BY project_id",
                            rs -> rs.getString(1)),
                        tx.query(
                            "SELECT change_id || ':' || state FROM changes ORDER BY change_id",
                            rs -> rs.getString(1)),
                        tx.query(
                            "SELECT task_id || ':' || state || ':' || attempts || ':'"
                                + " || COALESCE(agent_id, '') FROM tasks ORDER BY task_id",
                            rs -> rs.getString(1)),
                        tx.query(
                            "SELECT event_id FROM outbox ORDER BY event_id", rs -> rs.getString(1)))
                    .toString())
        + "|wakes="
        + f.commandsOn(Queue.AGENT_WAKEUPS)
        + "|integration="
        + f.commandsOn(Queue.INTEGRATION);
  }

  /** Handles {@code c} twice, as a redelivery after a crash before the ack would. */
  private Outcome twice(Command c) throws Exception {
    Outcome first = consumer.handle(c, delivery(1));
    String after = snapshot();
    Outcome second = consumer.handle(c, delivery(2));
    assertThat(snapshot())
        .as("state after the second delivery of " + c.commandType())
        .isEqualTo(after);
    assertThat(second).isEqualTo(first);
    return first;
  }

  private static TaskSpec task(String key, String... deps) {
    return new TaskSpec(key, null, List.of(deps), List.of("path:src/" + key));
  }

  @DatabaseTest
  void everyHandlerDeliveredTwiceChangesTheStateOnceWithOneEventAndOneCommand() throws Exception {
    ObjectNode project =
        JsonNodeFactory.instance.objectNode().put("tenantId", "t1").put("name", "P");
    String before = snapshot();
    assertThat(twice(command(CommandType.PROJECT_PROVISION, "p1", null, project)))
        .isInstanceOf(Outcome.Ack.class);
    assertThat(snapshot()).isNotEqualTo(before);
    assertThat(f.outbox("project.created")).isEqualTo(1);

    twice(command(CommandType.APP_PROVISION, "p1", null, null));
    assertThat(f.lifecycle.projects().project("p1").orElseThrow().hasLiveApp()).isTrue();
    twice(command(CommandType.APP_REMOVE, "p1", null, null));
    assertThat(f.lifecycle.projects().project("p1").orElseThrow().hasLiveApp()).isFalse();
    assertThat(f.outboxTypes())
        .containsExactly("project.created", "app.provisioned", "app.removed");

    String c =
        f.lifecycle
            .changes()
            .create("p1", "r1", WorkGraph.of(task("a"), task("b"), task("c", "a")))
            .get()
            .change()
            .changeId();
    twice(command(CommandType.CHANGE_DISPATCH, "p1", c, null));
    assertThat(f.outbox("task.ready")).isEqualTo(2);
    assertThat(f.outbox("task.assigned")).isEqualTo(2);
    assertThat(f.commandsOn(Queue.AGENT_WAKEUPS)).isEqualTo(2);

    // a fails; change.settle makes its second attempt ready and wakes its new Agent.
    TaskRef a =
        new TaskRef(
            "p1", c, c + ":a", f.lifecycle.changes().task(c + ":a").orElseThrow().agentId(), 1);
    f.lifecycle.agents().start(a).get();
    f.lifecycle.agents().fail(a, "tests failed").get();
    twice(command(CommandType.CHANGE_SETTLE, "p1", c, null));
    assertThat(f.lifecycle.changes().task(c + ":a").orElseThrow().attempt()).isEqualTo(2);
    assertThat(f.lifecycle.changes().task(c + ":a").orElseThrow().state()).isEqualTo("assigned");
    assertThat(f.commandsOn(Queue.AGENT_WAKEUPS)).isEqualTo(3);

    // release.recover finds the release rows and writes nothing.
    f.database.inTransaction(
        tx ->
            tx.update(
                "INSERT INTO releases (release_id, project_id, generation, change_id, state,"
                    + " created_at_ms, updated_at_ms) VALUES ('rel_p1_1', 'p1', 1, ?, 'failed', 0, 0)",
                c));
    twice(command(CommandType.RELEASE_RECOVER, "p1", c, null));

    // forks.sweep: two variants of one parent, one completed; the open one is not selected.
    forks("p1");
    Command sweep =
        Command.builder()
            .commandId("cmd_forks.sweep_test")
            .commandType(CommandType.FORKS_SWEEP)
            .createdAt(f.clock.instant())
            .build();
    twice(sweep);
    assertThat(f.lifecycle.changes().change("fork-b").orElseThrow().state())
        .isEqualTo("not_selected");
    assertThat(f.lifecycle.changes().change("fork-a").orElseThrow().state()).isEqualTo("completed");
    assertThat(f.outbox("change.not_selected")).isEqualTo(1);

    // project.cleanup cancels the open Changes of an archived project.
    f.lifecycle.projects().archive("p1").get();
    twice(command(CommandType.PROJECT_CLEANUP, "p1", null, null));
    assertThat(f.lifecycle.changes().change(c).orElseThrow().state()).isEqualTo("cancelled");
    assertThat(f.lifecycle.changes().change("parent").orElseThrow().state()).isEqualTo("cancelled");
    assertThat(f.outbox("change.cancelled")).isEqualTo(2);
  }

  /** Fork variants of {@code parent} (made with SQL: creating forks is a later issue's API). */
  private void forks(String projectId) {
    f.database.inTransaction(
        tx -> {
          for (String[] row :
              new String[][] {{"fork-a", "completed"}, {"fork-b", "open"}, {"parent", "open"}}) {
            tx.update(
                "INSERT INTO changes (change_id, project_id, client_request_id, parent_change_id,"
                    + " state, created_at_ms, updated_at_ms, last_activity_at_ms)"
                    + " VALUES (?, ?, ?, ?, ?, 0, 0, 0)",
                row[0],
                projectId,
                "req-" + row[0],
                row[0].equals("parent") ? null : "parent",
                row[1]);
          }
          return null;
        });
  }

  @DatabaseTest
  void aBoundedCommandAsksForMoreDeliveriesAndIsAcknowledgedOnTheFourth() throws Exception {
    f.project("p-big");
    for (int i = 0; i < 45; i++) {
      f.lifecycle.changes().create("p-big", "r" + i, WorkGraph.of(task("a"))).get();
    }
    // Archived without the archive's own end of its Changes (as if it stopped half way): the
    // cleanup's bound is what ends them.
    f.database.inTransaction(
        tx -> tx.update("UPDATE projects SET status = 'archived' WHERE project_id = 'p-big'"));
    Command cleanup = command(CommandType.PROJECT_CLEANUP, "p-big", null, null);
    for (int n = 1; n <= 3; n++) {
      Outcome o = consumer.handle(cleanup, delivery(n));
      assertThat(o)
          .isEqualTo(
              Outcome.retry(Duration.ofMillis(200), "more work after this delivery's bound"));
      assertThat(f.count("SELECT COUNT(*) FROM changes WHERE state = 'cancelled'"))
          .isEqualTo(10L * n);
    }
    assertThat(consumer.handle(cleanup, delivery(4))).isInstanceOf(Outcome.Ack.class);
    assertThat(f.count("SELECT COUNT(*) FROM changes WHERE state = 'cancelled'")).isEqualTo(40);
    assertThat(f.count("SELECT COUNT(*) FROM changes WHERE state = 'open'")).isEqualTo(5);
    // The next sweep's cleanup takes the rest and is done.
    assertThat(consumer.handle(cleanup, delivery(1))).isInstanceOf(Outcome.Ack.class);
    assertThat(f.count("SELECT COUNT(*) FROM changes WHERE state = 'open'")).isZero();
  }

  /** A Change of {@code projectId} still open while its Project ends (made in a race with it). */
  private String openChangeOfAnEndedProject(String projectId, String status) throws Exception {
    f.project(projectId);
    String c =
        f.lifecycle
            .changes()
            .create(projectId, "r1", WorkGraph.of(task("a")))
            .get()
            .change()
            .changeId();
    f.database.inTransaction(
        tx -> tx.update("UPDATE projects SET status = ? WHERE project_id = ?", status, projectId));
    return c;
  }

  private void aQueuedCommandOfAnEndedProjectIsRefusedAndEndsItsChange(String status)
      throws Exception {
    String c = openChangeOfAnEndedProject("p-end", status);
    String reason = "project_" + status;
    for (CommandType type :
        List.of(
            CommandType.CHANGE_DISPATCH,
            CommandType.CANDIDATE_CREATE,
            CommandType.VERIFICATION_START,
            CommandType.RELEASE_START,
            CommandType.CHANGE_SETTLE)) {
      Command cmd = command(type, "p-end", c, null);
      assertThat(consumer.handle(cmd, delivery(1)))
          .as(type.wireName())
          .isEqualTo(
              Outcome.refuse(
                  type.wireName()
                      + " "
                      + cmd.commandId()
                      + ": project p-end is "
                      + status
                      + " ("
                      + reason
                      + ")"));
    }
    assertThat(f.lifecycle.changes().change(c).orElseThrow().state()).isEqualTo("cancelled");
    assertThat(f.lifecycle.changes().change(c).orElseThrow().reason()).isEqualTo(reason);
    assertThat(f.lifecycle.changes().task(c + ":a").orElseThrow().state()).isEqualTo("cancelled");
    assertThat(f.outbox("change.cancelled")).isEqualTo(1);
    assertThat(f.outbox("task.ready")).as("nothing dispatched").isZero();
    assertThat(f.count("SELECT COUNT(*) FROM candidates")).as("nothing composed").isZero();
    assertThat(
            consumer.handle(command(CommandType.APP_PROVISION, "p-end", null, null), delivery(1)))
        .isInstanceOf(Outcome.Refuse.class);
    assertThat(f.lifecycle.projects().project("p-end").orElseThrow().hasLiveApp()).isFalse();
  }

  @DatabaseTest
  void aQueuedCommandOfADeletedProjectIsRefusedWithTheReasonAndEndsItsChange() throws Exception {
    aQueuedCommandOfAnEndedProjectIsRefusedAndEndsItsChange("deleted");
  }

  @DatabaseTest
  void aQueuedCommandOfAnArchivedProjectIsRefusedWithTheReasonAndEndsItsChange() throws Exception {
    aQueuedCommandOfAnEndedProjectIsRefusedAndEndsItsChange("archived");
  }

  @DatabaseTest
  void onTheQueueADeletedProjectsCommandIsAcknowledgedWithoutADeadLetter() throws Exception {
    List<Outcome> outcomes = new java.util.concurrent.CopyOnWriteArrayList<>();
    runOnQueue(
        (command, delivery) -> {
          Outcome o = consumer.handle(command, delivery);
          outcomes.add(o);
          return o;
        });
    f.project("p-del");
    String c =
        f.lifecycle
            .changes()
            .create("p-del", "r1", WorkGraph.of(task("a")))
            .get()
            .change()
            .changeId();
    assertThat(f.lifecycle.projects().delete("p-del").get()).isTrue();
    assertThat(f.lifecycle.changes().change(c).orElseThrow().reason()).isEqualTo("project_deleted");
    f.commands.send(command(CommandType.CHANGE_DISPATCH, "p-del", c, null)).get();
    await().atMost(Duration.ofSeconds(20)).until(() -> !outcomes.isEmpty());
    assertThat(outcomes.get(0)).isInstanceOf(Outcome.Refuse.class);
    await().atMost(Duration.ofSeconds(20)).until(() -> f.commandsOn(Queue.INTEGRATION) == 0);
    assertThat(f.commandsOn(Queue.DEAD_LETTER)).isZero();
    assertThat(outcomes).hasSize(1); // acknowledged: not delivered again
    assertThat(f.outbox("task.ready")).isZero();
  }

  @DatabaseTest
  void badInputIsRejectedWithAReasonThatNamesIt() throws Exception {
    ObjectNode noTenant = JsonNodeFactory.instance.objectNode().put("name", "P");
    assertThat(
            consumer.handle(
                command(CommandType.PROJECT_PROVISION, "p1", null, noTenant), delivery(1)))
        .isEqualTo(
            Outcome.reject(
                "project.provision cmd_test_project.provision_p1: payload lacks tenantId"));
    assertThat(
            consumer.handle(command(CommandType.APP_PROVISION, "p-none", null, null), delivery(1)))
        .isEqualTo(Outcome.reject("unknown project p-none"));
    assertThat(
            consumer.handle(
                command(CommandType.CHANGE_DISPATCH, "p-none", "chg_none", null), delivery(1)))
        .isEqualTo(Outcome.reject("unknown change chg_none"));
    assertThat(f.count("SELECT COUNT(*) FROM projects")).isZero();
    // A type whose handler is a later issue's throws: retried, then dead-lettered, never acked.
    assertThatThrownBy(
            () -> consumer.handle(command(CommandType.INDEX_BUILD, "p1", null, null), delivery(1)))
        .hasMessageContaining("no handler for index.build");
  }

  private QueueConsumer<Command> runOnQueue(
      org.rhumbatron.platform.queue.QueueHandler<Command> handler) {
    QueueRuntime runtime =
        new QueueRuntime(
            f.connection,
            f.commands,
            new EnvelopeCodec(),
            QueueTimings.from(f.settings),
            f.clock,
            new DatabaseHandlerRuns(f.database, f.clock, Duration.ofDays(14)));
    QueueConsumer<Command> q =
        runtime.runQueueConsumer(
            new QueueConsumerConfig(
                Queue.INTEGRATION, 10, 2, 3, Duration.ofMillis(200), Queue.DEAD_LETTER),
            handler,
            QueueListener.none());
    running.add(q);
    return q;
  }

  @DatabaseTest
  void onTheQueueAMissingFieldGoesToDeadLetterAtOnceWithItsReason() throws Exception {
    runOnQueue(consumer);
    ObjectNode noName = JsonNodeFactory.instance.objectNode().put("tenantId", "t1");
    f.commands.send(command(CommandType.PROJECT_PROVISION, "p1", null, noName)).get();
    JetStreamSubscription sub =
        f.connection
            .jetStream()
            .subscribe(
                Queue.DEAD_LETTER.subject(),
                PullSubscribeOptions.builder().stream(Queue.STREAM_NAME).build());
    List<Message> got = new ArrayList<>();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> got.addAll(sub.fetch(1, Duration.ofMillis(200))) || !got.isEmpty());
    DeadLetterMessage dl = new EnvelopeCodec().decodeDeadLetter(got.get(0).getData());
    assertThat(dl.error())
        .isEqualTo("project.provision cmd_test_project.provision_p1: payload lacks name");
    assertThat(dl.deliveryCount()).isEqualTo(1); // no retries: they could not help
    assertThat(f.count("SELECT COUNT(*) FROM projects")).isZero();
  }

  @DatabaseTest
  void onTheQueueACommandWhoseAckIsLostIsRedeliveredAndChangesNothingMore() throws Exception {
    Map<String, Integer> deliveries = new ConcurrentHashMap<>();
    // The first delivery of each command does its work, then dies before the ack.
    runOnQueue(
        (command, delivery) -> {
          Outcome o = consumer.handle(command, delivery);
          if (deliveries.merge(command.commandId(), 1, Integer::sum) == 1) {
            throw new IllegalStateException("crash before the ack");
          }
          return o;
        });
    ObjectNode project =
        JsonNodeFactory.instance.objectNode().put("tenantId", "t1").put("name", "P");
    f.commands.send(command(CommandType.PROJECT_PROVISION, "p1", null, project)).get();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> deliveries.getOrDefault("cmd_test_project.provision_p1", 0) == 2);
    String c =
        f.lifecycle
            .changes()
            .create("p1", "r1", WorkGraph.of(task("a"), task("b")))
            .get()
            .change()
            .changeId();
    Command dispatch = command(CommandType.CHANGE_DISPATCH, "p1", c, null);
    f.commands.send(dispatch).get();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> deliveries.getOrDefault(dispatch.commandId(), 0) == 2);
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> f.commandsOn(Queue.INTEGRATION) == 0); // acked
    assertThat(f.outbox("project.created")).isEqualTo(1);
    assertThat(f.outbox("task.assigned")).isEqualTo(2);
    assertThat(f.commandsOn(Queue.AGENT_WAKEUPS)).isEqualTo(2);
  }

  /**
   * Two change.dispatch and a change.settle of one Change in one batch run at once (all three are
   * in their handlers together: the barrier) and leave what the same three leave handled one after
   * the other on a twin Change: no Task readied or assigned twice, no update lost.
   */
  @DatabaseTest
  void commandsOfOneChangeHandledAtOnceLeaveWhatTheyLeaveOneAfterTheOther() throws Exception {
    f.project("p1");
    WorkGraph graph =
        WorkGraph.of(task("a"), task("b"), task("c"), task("d", "a"), task("e", "b", "c"));
    String serial = f.lifecycle.changes().create("p1", "serial", graph).get().change().changeId();
    String together =
        f.lifecycle.changes().create("p1", "together", graph).get().change().changeId();
    for (Command c : oneChangesCommands(serial)) {
      assertThat(consumer.handle(c, delivery(1))).isInstanceOf(Outcome.Ack.class);
    }
    long serialWakes = f.commandsOn(Queue.AGENT_WAKEUPS);
    assertThat(serialWakes).isEqualTo(3);

    List<Command> batch = oneChangesCommands(together);
    for (Command c : batch) {
      f.commands.send(c).get();
    }
    CyclicBarrier allIn = new CyclicBarrier(batch.size());
    List<Outcome> outcomes = new CopyOnWriteArrayList<>();
    runOnQueue(
        (command, delivery) -> {
          allIn.await(10, TimeUnit.SECONDS); // throws unless all three run at once
          Outcome o = consumer.handle(command, delivery);
          outcomes.add(o);
          return o;
        });
    await().atMost(Duration.ofSeconds(20)).until(() -> outcomes.size() == batch.size());
    await().atMost(Duration.ofSeconds(5)).until(() -> f.commandsOn(Queue.INTEGRATION) == 0);
    assertThat(outcomes).allSatisfy(o -> assertThat(o).isInstanceOf(Outcome.Ack.class));
    assertThat(changeState(together)).isEqualTo(changeState(serial));
    assertThat(
            f.count(
                "SELECT COUNT(*) FROM tasks WHERE change_id = ? AND state = 'assigned'", together))
        .isEqualTo(3);
    assertThat(f.commandsOn(Queue.AGENT_WAKEUPS)).isEqualTo(2 * serialWakes);
  }

  /** change.dispatch twice (two causes) and change.settle of {@code changeId}. */
  private List<Command> oneChangesCommands(String changeId) {
    List<Command> out = new ArrayList<>();
    for (String cause : List.of("first", "second")) {
      out.add(
          Command.builder()
              .commandId("cmd_" + cause + "_" + changeId + "_dispatch")
              .commandType(CommandType.CHANGE_DISPATCH)
              .projectId("p1")
              .changeId(changeId)
              .createdAt(f.clock.instant())
              .payload(JsonNodeFactory.instance.objectNode())
              .build());
    }
    out.add(command(CommandType.CHANGE_SETTLE, "p1", changeId, null));
    return out;
  }

  /**
   * A Change's Tasks (key, state, attempts, whether an Agent holds it) and the count of each Event
   * type it wrote, without its ids, so that twin Changes compare.
   */
  private String changeState(String changeId) {
    EnvelopeCodec codec = new EnvelopeCodec();
    Map<String, Long> events = new java.util.TreeMap<>();
    f
        .database
        .read(tx -> tx.query("SELECT payload FROM outbox", rs -> codec.decodeEvent(rs.getBytes(1))))
        .stream()
        .filter(e -> changeId.equals(e.changeId()))
        .forEach(e -> events.merge(e.eventType().wireName(), 1L, Long::sum));
    return f.database.read(
            tx ->
                tx.query(
                    "SELECT SUBSTR(task_id, LENGTH(change_id) + 2) || ':' || state || ':' ||"
                        + " attempts || ':' || CASE WHEN agent_id IS NULL THEN 'free' ELSE"
                        + " 'held' END FROM tasks WHERE change_id = ? ORDER BY task_id",
                    rs -> rs.getString(1),
                    changeId))
        + " "
        + events;
  }

  /** Runs candidate.create for a verifying Change of p1 and returns its Candidate. */
  private String composeCandidate(String changeId) throws Exception {
    consumer.handle(command(CommandType.CANDIDATE_CREATE, "p1", changeId, null), delivery(1));
    return f.database.read(
        tx ->
            tx.queryFirst(
                    "SELECT candidate_id FROM candidates WHERE change_id = ?",
                    rs -> rs.getString(1),
                    changeId)
                .orElseThrow());
  }

  /** Runs every Task of {@code changeId} to completed by its Agent, so the Change verifies. */
  private void completeAll(String changeId) throws Exception {
    for (int round = 0; round < 10; round++) {
      var d =
          f.lifecycle.changes().dispatch(changeId, "cmd_dispatch_" + changeId + "_" + round).get();
      if (d.verification()) {
        return;
      }
      for (var w : d.wakes()) {
        f.lifecycle.agents().start(w.task()).get();
        f.lifecycle.agents().proposeChangeset(w.task()).get();
        f.lifecycle.agents().complete(w.task()).get();
      }
    }
    throw new AssertionError(changeId + " did not verify");
  }

  @DatabaseTest
  void candidateCreateComposesOnceAndSendsVerificationStart() throws Exception {
    f.project("p1");
    String c =
        f.lifecycle
            .changes()
            .create("p1", "r1", WorkGraph.of(task("a"), task("b", "a")))
            .get()
            .change()
            .changeId();
    completeAll(c);
    Command create = command(CommandType.CANDIDATE_CREATE, "p1", c, null);
    assertThat(twice(create)).isInstanceOf(Outcome.Ack.class);
    assertThat(f.count("SELECT COUNT(*) FROM candidates WHERE change_id = ?", c)).isEqualTo(1);
    assertThat(f.outbox("candidate.created")).isEqualTo(1);
    assertThat(f.commandsOn(Queue.VERIFICATION)).isEqualTo(1);
    String changesets =
        f.database.read(
            tx ->
                tx.queryFirst(
                        "SELECT changeset_ids FROM candidates WHERE change_id = ?",
                        rs -> rs.getString(1),
                        c)
                    .orElseThrow());
    assertThat(changesets.split(",")).hasSize(2); // one per Task
  }

  /** A Change of p1 whose Task is done, beside another Change's claim of path:src/ (a prefix). */
  private String verifyingBesideAClaimOfAnotherChange() throws Exception {
    f.project("p1");
    String other =
        f.lifecycle
            .changes()
            .create("p1", "r-other", WorkGraph.of(task("a")))
            .get()
            .change()
            .changeId();
    var w = f.lifecycle.changes().dispatch(other, "cmd_o").get().wakes().get(0);
    f.lifecycle.agents().start(w.task()).get();
    f.lifecycle.agents().acquireClaim(w.task(), "path:src/").get(); // a prefix of path:src/a
    String c =
        f.lifecycle.changes().create("p1", "r1", WorkGraph.of(task("a"))).get().change().changeId();
    completeAll(c);
    return c;
  }

  @DatabaseTest
  void candidateCreateWaitsForAConflictReviewAndItsFourthDeliveryComposesAnyway() throws Exception {
    String c = verifyingBesideAClaimOfAnotherChange();
    Command create = command(CommandType.CANDIDATE_CREATE, "p1", c, null);
    for (int n = 1; n <= 3; n++) {
      assertThat(consumer.handle(create, delivery(n)))
          .isEqualTo(Outcome.retry(Duration.ofSeconds(45), "waiting for a conflict review"));
    }
    assertThat(f.count("SELECT COUNT(*) FROM candidates")).isZero();
    assertThat(consumer.handle(create, delivery(4))).isInstanceOf(Outcome.Ack.class);
    assertThat(f.count("SELECT COUNT(*) FROM candidates WHERE change_id = ?", c)).isEqualTo(1);
    assertThat(f.commandsOn(Queue.VERIFICATION)).isEqualTo(1);
  }

  /**
   * The waits spent three deliveries; the database fails the 4th's compose. A fresh
   * candidate.create takes over with retries of its own and composes at once, though the conflict
   * is still there; when it fails too, it throws (the queue retries and dead-letters it), and no
   * third one comes.
   */
  @DatabaseTest
  void aComposeThatFailsOnTheLastWaitingDeliveryIsHandedToAFreshCommand() throws Exception {
    String c = verifyingBesideAClaimOfAnotherChange();
    Command create = command(CommandType.CANDIDATE_CREATE, "p1", c, null);
    for (int n = 1; n <= 3; n++) {
      assertThat(consumer.handle(create, delivery(n))).isInstanceOf(Outcome.Retry.class);
    }
    long before = f.commandsOn(Queue.INTEGRATION);
    f.refuseInserts("candidates", true);
    assertThat(consumer.handle(create, delivery(4))).isInstanceOf(Outcome.Ack.class);
    assertThat(f.count("SELECT COUNT(*) FROM candidates")).isZero();
    assertThat(f.commandsOn(Queue.INTEGRATION)).isEqualTo(before + 1);
    Command fresh = f.lastCommandOn(Queue.INTEGRATION);
    assertThat(fresh.commandType()).isEqualTo(CommandType.CANDIDATE_CREATE);
    assertThat(fresh.commandId()).isNotEqualTo(create.commandId());
    assertThat(fresh.changeId()).isEqualTo(c);

    assertThatThrownBy(() -> consumer.handle(fresh, delivery(4)))
        .as("the fresh command fails like any other: no hand-off of its own")
        .isInstanceOf(Exception.class);
    assertThat(f.commandsOn(Queue.INTEGRATION)).isEqualTo(before + 1);

    f.refuseInserts("candidates", false);
    assertThat(consumer.handle(fresh, delivery(1))).isInstanceOf(Outcome.Ack.class);
    assertThat(f.count("SELECT COUNT(*) FROM candidates WHERE change_id = ?", c)).isEqualTo(1);
    assertThat(f.commandsOn(Queue.VERIFICATION)).isEqualTo(1);
  }

  /**
   * An approval answered stale_base: the Candidate went stale and the Change back to verifying in
   * one commit, and the rebase sent after it never went out (NATS away). The approve step's re-run
   * sees the stale Candidate with no later one and sends the rebase, which composes a new
   * Candidate; once one exists, a re-run sends nothing.
   */
  @DatabaseTest
  void aRebaseLostAfterAStaleBaseIsSentAgainByTheApproveStepsRerun() throws Exception {
    f.project("p1");
    String c =
        f.lifecycle.changes().create("p1", "r1", WorkGraph.of(task("a"))).get().change().changeId();
    completeAll(c);
    String cand = composeCandidate(c);
    f.lifecycle.approvals().recordVerdict(cand, true, null, "cmd_v").get();
    String first =
        f.lifecycle.changes().create("p1", "r0", WorkGraph.of(task("b"))).get().change().changeId();
    completeAll(first);
    f.lifecycle.approvals().recordVerdict(composeCandidate(first), true, null, "cmd_v0").get();
    f.lifecycle.approvals().approve(first).get(); // canonical advances: cand's base is stale
    f.lifecycle.approvals().stale(cand, "approve:" + cand).get(); // the commit; no rebase sent
    assertThat(f.lifecycle.changes().change(c).orElseThrow().state()).isEqualTo("verifying");
    long before = f.commandsOn(Queue.VERIFICATION);
    assertThat(f.lifecycle.candidates().staleAwaitingRebase(c, cand)).isTrue();

    ObjectNode input =
        JsonNodeFactory.instance.objectNode().put("projectId", "p1").put("changeId", c);
    Workflows.resendRebase(f.lifecycle, f.commands, input, cand);
    assertThat(f.commandsOn(Queue.VERIFICATION)).isEqualTo(before + 1);
    Command rebase = f.lastCommandOn(Queue.VERIFICATION);
    assertThat(rebase.commandId()).isEqualTo("cmd_" + cand + "_rebase");
    assertThat(consumer.handle(rebase, delivery(1))).isInstanceOf(Outcome.Ack.class);
    assertThat(
            f.count("SELECT COUNT(*) FROM candidates WHERE change_id = ? AND state <> 'stale'", c))
        .isEqualTo(1);
    assertThat(f.lifecycle.candidates().staleAwaitingRebase(c, cand)).isFalse();
  }

  @DatabaseTest
  void verificationStartRunsTheVerificationWorkflowOnceAndTheChangeAwaitsApproval()
      throws Exception {
    f.project("p1");
    String c =
        f.lifecycle.changes().create("p1", "r1", WorkGraph.of(task("a"))).get().change().changeId();
    completeAll(c);
    String cand = composeCandidate(c);
    Command start =
        Command.builder()
            .commandId(org.rhumbatron.protocol.StableIds.verify(cand))
            .commandType(CommandType.VERIFICATION_START)
            .projectId("p1")
            .changeId(c)
            .createdAt(f.clock.instant())
            .payload(JsonNodeFactory.instance.objectNode().put("candidateId", cand))
            .build();
    assertThat(Workflows.workflowStartFor(start).orElseThrow().instanceId()).isEqualTo(cand);
    assertThat(twice(start)).isInstanceOf(Outcome.Ack.class);
    assertThat(workflows.instance(cand).orElseThrow().stepsDone())
        .containsExactly("verify", "record", "approve");
    assertThat(f.lifecycle.changes().change(c).orElseThrow().state())
        .isEqualTo("awaiting_approval");
    assertThat(f.outbox("candidate.verified")).isEqualTo(1);
    Command noKey =
        Command.builder()
            .commandId("cmd_nokey")
            .commandType(CommandType.VERIFICATION_START)
            .projectId("p1")
            .changeId(c)
            .createdAt(f.clock.instant())
            .build();
    assertThat(consumer.handle(noKey, delivery(1)))
        .isEqualTo(Outcome.reject("verification.start cmd_nokey: payload lacks candidateId"));
  }

  /** p1 with a live app and a Change whose Candidate is verified: awaiting approval. */
  private String verifiedWithALiveApp() throws Exception {
    f.project("p1");
    f.lifecycle.projects().setLiveApp("p1", true, "cmd_app").get();
    String c =
        f.lifecycle.changes().create("p1", "r1", WorkGraph.of(task("a"))).get().change().changeId();
    completeAll(c);
    String cand = composeCandidate(c);
    f.lifecycle.approvals().recordVerdict(cand, true, null, "cmd_v").get();
    return c;
  }

  /** An integration consumer whose Workflows run on {@code engine}. */
  private IntegrationConsumer consumerOn(WorkflowEngine engine) {
    return new IntegrationConsumer(
        f.lifecycle,
        engine,
        f.commands,
        new DeadLetterOperator(f.database, f.commands, new EnvelopeCodec(), f.clock)
            ::supersedeForChange,
        f.clock,
        f.settings);
  }

  @DatabaseTest
  void approvalWithALiveAppReleasesThroughTheReleaseWorkflowAndCompletes() throws Exception {
    String c = verifiedWithALiveApp();
    var approval = f.lifecycle.approvals().approve(c).get();
    assertThat(approval.releaseId()).isEqualTo("rel_p1_1");
    assertThat(f.commandsOn(Queue.RELEASE)).isEqualTo(1);
    Command release = f.lifecycle.commands().releaseStart("p1", c, "rel_p1_1");
    assertThat(release.commandId()).isEqualTo("cmd_rel_p1_1_release");
    twice(release);
    assertThat(f.lifecycle.changes().change(c).orElseThrow().state()).isEqualTo("completed");
    assertThat(f.outbox("release.completed")).isEqualTo(1);
    assertThat(f.count("SELECT COUNT(*) FROM releases WHERE state = 'completed'")).isEqualTo(1);
  }

  @DatabaseTest
  void aDeclinedChangeEndsDeclinedAndTheFiveMinuteSweepClosesItsDeadLetters() throws Exception {
    f.project("p1");
    String c =
        f.lifecycle.changes().create("p1", "r1", WorkGraph.of(task("a"))).get().change().changeId();
    completeAll(c);
    String cand = composeCandidate(c);
    f.lifecycle.approvals().recordVerdict(cand, true, null, "cmd_v").get();
    // A command of the Change that was dead-lettered while it waited.
    EnvelopeCodec codec = new EnvelopeCodec();
    Command lost = command(CommandType.CHANGE_SETTLE, "p1", c, null);
    new org.rhumbatron.router.deadletter.DeadLetterConsumer(
            f.database, f.coordinator.changeEvents(), codec, f.clock)
        .record(
            new DeadLetterMessage(
                Queue.INTEGRATION,
                4,
                "boom",
                new String(codec.encodeCommand(lost), java.nio.charset.StandardCharsets.UTF_8),
                f.clock.instant()));
    DeadLetterOperator operator = new DeadLetterOperator(f.database, f.commands, codec, f.clock);
    assertThat(operator.listOpen(10)).hasSize(1);
    assertThat(f.lifecycle.approvals().decline(c).get()).isTrue();
    assertThat(f.lifecycle.changes().change(c).orElseThrow().state()).isEqualTo("declined");
    new org.rhumbatron.router.maintenance.Maintenance(
            f.database, command -> {}, operator, f.settings)
        .runReleaseSweep(Instant.parse("2026-12-04T10:04:00Z"));
    assertThat(operator.listOpen(10)).isEmpty();
    assertThat(
            f.count(
                "SELECT COUNT(*) FROM dead_letters WHERE change_id = ? AND resolution = 'change_ended'",
                c))
        .isEqualTo(1);
  }

  @DatabaseTest
  void releaseRecoverRunsAFailedReleaseWorkflowAgainAndTheChangeCompletes() throws Exception {
    String c = verifiedWithALiveApp();
    f.lifecycle.approvals().approve(c).get();
    // A release engine whose release step always fails (3 tries, then the instance fails).
    java.util.concurrent.atomic.AtomicBoolean broken =
        new java.util.concurrent.atomic.AtomicBoolean(true);
    WorkflowEngine failing =
        new WorkflowEngine(f.database, f.clock, Runnable::run, 3, Duration.ZERO);
    Workflows.register(
        failing,
        f.lifecycle,
        new SimulatedVerifier(f.settings),
        (project, release) -> {
          if (broken.get()) {
            throw new IllegalStateException("deploy target unreachable");
          }
        },
        f.commands,
        f.clock,
        false);
    IntegrationConsumer withFailing = consumerOn(failing);
    withFailing.handle(f.lifecycle.commands().releaseStart("p1", c, "rel_p1_1"), delivery(1));
    await().atMost(Duration.ofSeconds(10)).until(() -> f.outbox("release.failed") == 1);
    assertThat(f.lifecycle.changes().change(c).orElseThrow().state()).isEqualTo("releasing");
    assertThat(f.count("SELECT COUNT(*) FROM releases WHERE state = 'failed'")).isEqualTo(1);
    broken.set(false);
    Command recover = command(CommandType.RELEASE_RECOVER, "p1", c, null);
    assertThat(withFailing.handle(recover, delivery(1))).isInstanceOf(Outcome.Ack.class);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> f.lifecycle.changes().change(c).orElseThrow().state().equals("completed"));
    assertThat(f.outbox("release.completed")).isEqualTo(1);
    // Recovering a completed release does nothing more.
    withFailing.handle(recover, delivery(2));
    assertThat(f.outbox("release.completed")).isEqualTo(1);
  }

  @DatabaseTest
  void aReleaseUnderWayWhenItsProjectIsDeletedDoesNotGoLive() throws Exception {
    String c = verifiedWithALiveApp();
    f.lifecycle.approvals().approve(c).get();
    // The deploy's first try fails, and the Project is deleted before the next one.
    java.util.concurrent.atomic.AtomicInteger tries =
        new java.util.concurrent.atomic.AtomicInteger();
    WorkflowEngine engine =
        new WorkflowEngine(f.database, f.clock, Runnable::run, 3, Duration.ZERO);
    Workflows.register(
        engine,
        f.lifecycle,
        new SimulatedVerifier(f.settings),
        (project, release) -> {
          if (tries.incrementAndGet() == 1) {
            f.lifecycle.projects().delete(project).get();
            throw new IllegalStateException("deploy target unreachable");
          }
        },
        f.commands,
        f.clock,
        false);
    consumerOn(engine)
        .handle(f.lifecycle.commands().releaseStart("p1", c, "rel_p1_1"), delivery(1));
    await().atMost(Duration.ofSeconds(10)).until(() -> f.outbox("release.failed") == 1);
    assertThat(tries).hasValue(1);
    assertThat(f.outbox("release.completed")).isZero();
    assertThat(f.count("SELECT COUNT(*) FROM releases WHERE state = 'failed'")).isEqualTo(1);
    assertThat(f.lifecycle.changes().change(c).orElseThrow().state()).isEqualTo("cancelled");
  }

  /**
   * A verifying Change whose candidate.create was lost (nothing composed, no log of it), or whose
   * stale Candidate's rebase was: the sweep's change.settle sends candidate.create again once the
   * Change has been quiet without a live Candidate for {@code changes.candidate-missing-after},
   * once per settle, and not while a live Candidate exists.
   */
  @DatabaseTest
  void aVerifyingChangeWithoutACandidateGetsCandidateCreateAgainFromTheSettle() throws Exception {
    f.project("p1");
    String c =
        f.lifecycle.changes().create("p1", "r1", WorkGraph.of(task("a"))).get().change().changeId();
    TaskRef a = f.lifecycle.changes().dispatch(c, "cmd_d1").get().wakes().get(0).task();
    f.lifecycle.agents().start(a).get();
    f.lifecycle.agents().proposeChangeset(a).get();
    f.lifecycle.agents().complete(a).get();
    assertThat(f.lifecycle.changes().dispatch(c, "cmd_d2").get().verification()).isTrue();

    assertThat(settleAfter(Duration.ofMinutes(4), c, "cmd_" + c + "_settle_1"))
        .as("not missing long enough")
        .isZero();
    assertThat(settleAfter(Duration.ofMinutes(2), c, "cmd_" + c + "_settle_2"))
        .as("one candidate.create, the same for the redelivered settle")
        .isEqualTo(1);

    Command again = f.lifecycle.commands().candidateAgain("p1", c, "cmd_" + c + "_settle_2");
    assertThat(consumer.handle(again, delivery(1))).isInstanceOf(Outcome.Ack.class);
    assertThat(f.count("SELECT COUNT(*) FROM candidates WHERE change_id = ?", c)).isEqualTo(1);
    assertThat(settleAfter(Duration.ofMinutes(11), c, "cmd_" + c + "_settle_3"))
        .as("a Change with a live Candidate gets none")
        .isZero();

    // The Candidate went stale and its rebase was never sent (its Workflow failed sending it).
    f.database.inTransaction(
        tx -> tx.update("UPDATE candidates SET state = 'stale' WHERE change_id = ?", c));
    assertThat(settleAfter(Duration.ofMinutes(1), c, "cmd_" + c + "_settle_4"))
        .as("only a stale Candidate: candidate.create again")
        .isEqualTo(1);
  }

  /** The integration commands change.settle {@code id} of {@code c} sent, after {@code quiet}. */
  private long settleAfter(Duration quiet, String c, String id) throws Exception {
    f.clock.advance(quiet);
    long before = f.commandsOn(Queue.INTEGRATION);
    Command settle =
        Command.builder()
            .commandId(id)
            .commandType(CommandType.CHANGE_SETTLE)
            .projectId("p1")
            .changeId(c)
            .createdAt(f.clock.instant())
            .payload(JsonNodeFactory.instance.objectNode())
            .build();
    assertThat(twice(settle)).isInstanceOf(Outcome.Ack.class);
    return f.commandsOn(Queue.INTEGRATION) - before;
  }
}
