package org.rhumbatron.lifecycle.workflow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.rhumbatron.lifecycle.workflow.WorkflowEngine.Start;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.testkit.SettableClock;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;

/** The Workflow engine on a real database; SQLite and PostgreSQL. */
class WorkflowTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final Instant T0 = Instant.parse("2030-01-02T03:04:05Z");

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  private final SettableClock clock = new SettableClock(T0);

  /** How many times each step ran, over every engine of a test. */
  private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

  private final List<AutoCloseable> open = new ArrayList<>();
  private Database database;
  private WorkflowEngine engine;

  @BeforeEach
  void open() {
    database = Database.open(db().url());
    engine = engine(database);
  }

  @AfterEach
  void close() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
  }

  /** An engine on its own pool: 3 tries per step, 10 ms apart. */
  private WorkflowEngine engine(Database db) {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    WorkflowEngine e = new WorkflowEngine(db, clock, pool, 3, Duration.ofMillis(10));
    open.add(db);
    open.add(
        () -> {
          pool.shutdownNow();
          pool.awaitTermination(10, TimeUnit.SECONDS);
        });
    open.add(e);
    return e;
  }

  /** A step that counts its runs and returns {@code result}. */
  private Step counted(String name, StepFunction result) {
    return new Step(
        name,
        ctx -> {
          calls.computeIfAbsent(name, n -> new AtomicInteger()).incrementAndGet();
          return result.run(ctx);
        });
  }

  private int calls(String step) {
    AtomicInteger n = calls.get(step);
    return n == null ? 0 : n.get();
  }

  private static ObjectNode input(String key, int value) {
    return JsonNodeFactory.instance.objectNode().put(key, value);
  }

  private WorkflowInstance awaitEnded(WorkflowEngine e, String id) {
    await()
        .atMost(WAIT)
        .until(() -> e.instance(id).map(i -> i.state() != WorkflowState.RUNNING).orElse(false));
    return e.instance(id).orElseThrow();
  }

  private long count(String sql, Object... args) {
    return database.read(tx -> tx.queryLong(sql, args));
  }

  /** a → 1, b → a + input.x, c → null: each result comes from the ones before. */
  private WorkflowDefinition sum() {
    return WorkflowDefinition.of(
        "sum",
        counted("a", ctx -> IntNode.valueOf(1)),
        counted(
            "b", ctx -> IntNode.valueOf(ctx.result("a").asInt() + ctx.input().get("x").asInt())),
        counted("c", ctx -> null));
  }

  @DatabaseTest
  void stepsRunInOrderWithTheirResultsStoredAndPassedOn() {
    List<String> order = new CopyOnWriteArrayList<>();
    engine.register(
        WorkflowDefinition.of(
            "order",
            counted("a", ctx -> record(order, "a", IntNode.valueOf(1))),
            counted(
                "b",
                ctx ->
                    record(
                        order,
                        "b",
                        IntNode.valueOf(ctx.result("a").asInt() + ctx.input().get("x").asInt()))),
            counted(
                "c",
                ctx -> {
                  assertThat(ctx.results().keySet()).containsExactly("a", "b");
                  return record(order, "c", TextNode.valueOf("sum " + ctx.result("b").asInt()));
                }),
            counted("d", ctx -> record(order, "d", null))));

    assertThat(engine.start("order", "wf-1", input("x", 41))).isEqualTo(Start.STARTED);

    WorkflowInstance done = awaitEnded(engine, "wf-1");
    assertThat(done.state()).isEqualTo(WorkflowState.COMPLETED);
    assertThat(done.lastError()).isNull();
    assertThat(order).containsExactly("a", "b", "c", "d");
    assertThat(done.stepsDone()).containsExactly("a", "b", "c", "d");
    assertThat(done.results())
        .containsEntry("a", IntNode.valueOf(1))
        .containsEntry("b", IntNode.valueOf(42))
        .containsEntry("c", TextNode.valueOf("sum 42"))
        .containsEntry("d", NullNode.getInstance());
    assertThat(done.type()).isEqualTo("order");
    assertThat(done.input()).isEqualTo(input("x", 41));
    // Every time written is the injected clock's.
    assertThat(
            count(
                "SELECT COUNT(*) FROM workflow_steps WHERE instance_id = ? AND completed_at_ms = ?",
                "wf-1",
                T0.toEpochMilli()))
        .isEqualTo(4);
    assertThat(
            count(
                "SELECT COUNT(*) FROM workflow_instances WHERE instance_id = ?"
                    + " AND created_at_ms = ? AND updated_at_ms = ?",
                "wf-1",
                T0.toEpochMilli(),
                T0.toEpochMilli()))
        .isEqualTo(1);
  }

  private static JsonNode record(List<String> order, String step, JsonNode result) {
    order.add(step);
    return result;
  }

  @DatabaseTest
  void aSecondStartWithTheSameIdIsAlreadyStartedAndRunsNoStepAgain() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch inA = new CountDownLatch(1);
    engine.register(
        WorkflowDefinition.of(
            "held",
            counted(
                "a",
                ctx -> {
                  inA.countDown();
                  release.await();
                  return IntNode.valueOf(1);
                }),
            counted("b", ctx -> ctx.input())));

    assertThat(engine.start("held", "wf-2", input("x", 1))).isEqualTo(Start.STARTED);
    assertThat(inA.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    // While the first run is in step a, and again after it completed.
    assertThat(engine.start("held", "wf-2", input("x", 2))).isEqualTo(Start.ALREADY_STARTED);
    release.countDown();
    assertThat(awaitEnded(engine, "wf-2").state()).isEqualTo(WorkflowState.COMPLETED);
    assertThat(engine.start("held", "wf-2", input("x", 3))).isEqualTo(Start.ALREADY_STARTED);
    assertThat(engine.resumeAll()).isZero();

    assertThat(calls("a")).isEqualTo(1);
    assertThat(calls("b")).isEqualTo(1);
    WorkflowInstance done = engine.instance("wf-2").orElseThrow();
    assertThat(done.input()).isEqualTo(input("x", 1)); // the first start's
    assertThat(done.results().get("b")).isEqualTo(input("x", 1));
    assertThat(count("SELECT COUNT(*) FROM workflow_instances")).isEqualTo(1);
  }

  @DatabaseTest
  void anUnknownTypeIsRefusedNamingItAndNothingIsStored() {
    engine.register(sum());
    assertThatThrownBy(() -> engine.start("no-such-type", "wf-3", input("x", 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no-such-type");
    assertThat(engine.instance("wf-3")).isEmpty();
    assertThatThrownBy(() -> engine.register(sum()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("sum");
  }

  @DatabaseTest
  void threadsRacingToStartOneIdMakeOneInstanceAndRunEachStepOnce() throws Exception {
    engine.register(sum());
    int threads = 8;
    ExecutorService racers = Executors.newFixedThreadPool(threads);
    open.add(racers::shutdownNow);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Start>> starts = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      int x = i;
      starts.add(
          racers.submit(
              () -> {
                go.await();
                return engine.start("sum", "wf-race", input("x", x));
              }));
    }
    go.countDown();
    List<Start> outcomes = new ArrayList<>();
    for (Future<Start> f : starts) {
      outcomes.add(f.get(WAIT.toSeconds(), TimeUnit.SECONDS));
    }

    assertThat(outcomes).containsOnlyOnce(Start.STARTED);
    assertThat(outcomes).filteredOn(s -> s == Start.ALREADY_STARTED).hasSize(threads - 1);
    assertThat(awaitEnded(engine, "wf-race").state()).isEqualTo(WorkflowState.COMPLETED);
    assertThat(count("SELECT COUNT(*) FROM workflow_instances")).isEqualTo(1);
    assertThat(count("SELECT COUNT(*) FROM workflow_steps")).isEqualTo(3);
    assertThat(List.of(calls("a"), calls("b"), calls("c"))).containsExactly(1, 1, 1);
  }

  @DatabaseTest
  void aStepThatThrowsTwiceThenSucceedsCompletes() {
    engine.register(
        WorkflowDefinition.of(
            "flaky",
            counted("a", ctx -> IntNode.valueOf(7)),
            counted(
                "b",
                ctx -> {
                  if (calls("b") <= 2) {
                    throw new IllegalStateException("not yet " + calls("b"));
                  }
                  return IntNode.valueOf(ctx.result("a").asInt() * 2);
                }),
            counted("c", ctx -> ctx.result("b"))));

    engine.start("flaky", "wf-flaky", null);

    WorkflowInstance done = awaitEnded(engine, "wf-flaky");
    assertThat(done.state()).isEqualTo(WorkflowState.COMPLETED);
    assertThat(done.results().get("c")).isEqualTo(IntNode.valueOf(14));
    assertThat(List.of(calls("a"), calls("b"), calls("c"))).containsExactly(1, 3, 1);
    assertThat(done.lastError()).contains("step b (try 2 of 3)").contains("not yet 2");
    assertThat(done.input()).isEqualTo(JsonNodeFactory.instance.objectNode());
  }

  /**
   * The database refuses the first step's result for a while (full): the instance is not failed, no
   * restart is needed, and the run goes on once writes succeed; the step ran again (steps are
   * idempotent) and the later ones once.
   */
  @DatabaseTest
  void aRunTheDatabaseFailsGoesOnWhenTheDatabaseIsBack() throws Exception {
    engine.register(
        WorkflowDefinition.of(
            "outage",
            counted("a", ctx -> IntNode.valueOf(1)),
            counted("b", ctx -> IntNode.valueOf(2))));
    org.rhumbatron.lifecycle.LifecycleFixture.refuseInserts(database, "workflow_steps", true);

    engine.start("outage", "wf-outage", null);
    await().atMost(WAIT).until(() -> calls("a") >= 3);
    assertThat(engine.instance("wf-outage").orElseThrow().state()).isEqualTo(WorkflowState.RUNNING);
    org.rhumbatron.lifecycle.LifecycleFixture.refuseInserts(database, "workflow_steps", false);

    WorkflowInstance done = awaitEnded(engine, "wf-outage");
    assertThat(done.state()).isEqualTo(WorkflowState.COMPLETED);
    assertThat(calls("b")).isEqualTo(1);
  }

  @DatabaseTest
  void aStepThatAlwaysThrowsFailsTheInstanceAndTellsTheHookOnce() {
    List<String> told = new CopyOnWriteArrayList<>();
    engine.register(
        WorkflowDefinition.of(
                "doomed",
                counted("a", ctx -> IntNode.valueOf(1)),
                counted(
                    "b",
                    ctx -> {
                      throw new IllegalStateException("verifier unreachable");
                    }),
                counted("c", ctx -> IntNode.valueOf(3)))
            .onFailed((id, in, error) -> told.add(id + " x=" + in.get("x").asInt() + " " + error)));

    engine.start("doomed", "wf-doomed", input("x", 5));

    WorkflowInstance failed = awaitEnded(engine, "wf-doomed");
    assertThat(failed.state()).isEqualTo(WorkflowState.FAILED);
    assertThat(failed.lastError())
        .contains("step b (try 3 of 3)")
        .contains("IllegalStateException: verifier unreachable");
    assertThat(failed.stepsDone()).containsExactly("a");
    assertThat(List.of(calls("a"), calls("b"), calls("c"))).containsExactly(1, 3, 0);
    assertThat(told).containsExactly("wf-doomed x=5 " + failed.lastError());
    // A failed instance is not run again by a start or a resume.
    assertThat(engine.start("doomed", "wf-doomed", input("x", 5))).isEqualTo(Start.ALREADY_STARTED);
    assertThat(engine.resumeAll()).isZero();
    assertThat(calls("b")).isEqualTo(3);
    assertThat(told).hasSize(1);
  }

  /**
   * A first engine runs step s1 and is stopped inside s2 (closed, its threads interrupted, its
   * database closed), as a crash would leave the instance: running, s1 stored.
   */
  private void crashInStepTwo(String id) throws Exception {
    Database first = Database.open(db().url());
    WorkflowEngine crashing = engine(first);
    CountDownLatch inS2 = new CountDownLatch(1);
    CountDownLatch never = new CountDownLatch(1);
    crashing.register(
        WorkflowDefinition.of(
            "resumable",
            counted("s1", ctx -> TextNode.valueOf("from s1")),
            new Step(
                "s2",
                ctx -> {
                  inS2.countDown();
                  never.await();
                  throw new AssertionError("s2 of the first engine never ends");
                }),
            counted("s3", ctx -> IntNode.valueOf(3))));
    crashing.start("resumable", id, input("x", 1));
    assertThat(inS2.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    for (int i = open.size() - 1; i >= open.size() - 3; i--) {
      open.get(i).close(); // the engine, its pool (interrupting s2), its database
    }
    WorkflowInstance left = engine.instance(id).orElseThrow();
    assertThat(left.state()).isEqualTo(WorkflowState.RUNNING);
    assertThat(left.stepsDone()).containsExactly("s1");
    assertThat(left.lastError()).isNull();
  }

  /** The definition after the restart: s3 shows what s1 and s2 returned. */
  private WorkflowDefinition resumable() {
    return WorkflowDefinition.of(
        "resumable",
        counted("s1", ctx -> TextNode.valueOf("s1 again")),
        counted("s2", ctx -> TextNode.valueOf("s2 after " + ctx.result("s1").asText())),
        counted("s3", ctx -> ctx.result("s2")));
  }

  @DatabaseTest
  void aResumedInstanceSkipsTheStepsDone() throws Exception {
    crashInStepTwo("wf-crash");
    engine.register(resumable());

    assertThat(engine.resumeAll()).isEqualTo(1);

    WorkflowInstance done = awaitEnded(engine, "wf-crash");
    assertThat(done.state()).isEqualTo(WorkflowState.COMPLETED);
    assertThat(List.of(calls("s1"), calls("s2"), calls("s3"))).containsExactly(1, 1, 1);
    assertThat(done.results().get("s3")).isEqualTo(TextNode.valueOf("s2 after from s1"));
    assertThat(engine.resumeAll()).isZero();
  }

  @DatabaseTest
  void aRedeliveredStartResumesAnInstanceLeftRunning() throws Exception {
    crashInStepTwo("wf-redelivered");
    engine.register(resumable());

    assertThat(engine.start("resumable", "wf-redelivered", input("x", 1)))
        .isEqualTo(Start.ALREADY_STARTED);

    assertThat(awaitEnded(engine, "wf-redelivered").state()).isEqualTo(WorkflowState.COMPLETED);
    assertThat(List.of(calls("s1"), calls("s2"), calls("s3"))).containsExactly(1, 1, 1);
  }
}
