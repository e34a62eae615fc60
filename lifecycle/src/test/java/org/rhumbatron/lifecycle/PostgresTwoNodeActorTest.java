package org.rhumbatron.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.coordinator.project.ProjectRootActor.Promotion;
import org.rhumbatron.coordinator.project.ProjectRootActor.PromotionDecision;
import org.rhumbatron.coordinator.shard.ResourceShardActor;
import org.rhumbatron.lifecycle.changes.Dispatched;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.lifecycle.changes.WorkGraph.TaskSpec;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.platform.db.DatabaseOptions;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * Two cores on one PostgreSQL database: two lifecycles, each with its own coordinator, actor lanes
 * and connection pool, call the same actors at once, as two nodes that both serve the API and
 * consume the queues would. Each race runs on many actors at the same time, so that the two nodes'
 * transactions of one actor overlap in every order.
 */
class PostgresTwoNodeActorTest {
  private static final Duration PAUSED_SESSION_ENDS_AFTER = Duration.ofSeconds(5);

  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();
  @RegisterExtension final DatabaseExtension database = DatabaseExtension.postgres();

  private LifecycleFixture one;
  private LifecycleFixture two;

  @BeforeEach
  void start() throws Exception {
    one = new LifecycleFixture(nats.url(), database.database().url(), Map.of());
    two =
        new LifecycleFixture(
            nats.url(),
            database.database().url(),
            Map.of(),
            DatabaseOptions.builder().idleInTransactionTimeout(PAUSED_SESSION_ENDS_AFTER));
  }

  @AfterEach
  void stop() {
    two.close();
    one.close();
  }

  @Test
  void twoPromotionsOnOneBaseFromTwoNodesPromoteOneCandidateAndAnswerTheOtherStaleBase()
      throws Exception {
    int projects = 8;
    int rounds = 12;
    List<String> ids = IntStream.range(0, projects).mapToObj(i -> "pp" + i).toList();
    for (String p : ids) {
      one.project(p);
    }
    for (int g = 0; g < rounds; g++) {
      List<CompletableFuture<PromotionDecision>> viaOne = new ArrayList<>();
      List<CompletableFuture<PromotionDecision>> viaTwo = new ArrayList<>();
      for (String p : ids) {
        String changeA = LifecycleIds.changeId(p, "a" + g);
        String changeB = LifecycleIds.changeId(p, "b" + g);
        viaOne.add(
            one.coordinator.root(p).decidePromotion("cand_a" + g + "_" + p, g, changeA, "race"));
        viaTwo.add(
            two.coordinator.root(p).decidePromotion("cand_b" + g + "_" + p, g, changeB, "race"));
      }
      for (int i = 0; i < projects; i++) {
        PromotionDecision a = viaOne.get(i).get(30, TimeUnit.SECONDS);
        PromotionDecision b = viaTwo.get(i).get(30, TimeUnit.SECONDS);
        assertThat(List.of(a.promotion(), b.promotion()))
            .as("project %s, base generation %d", ids.get(i), g)
            .containsExactlyInAnyOrder(Promotion.PROMOTED, Promotion.STALE_BASE);
        assertThat(a.generation()).isEqualTo(g + 1);
        assertThat(b.generation()).isEqualTo(g + 1);
      }
    }
    for (String p : ids) {
      assertThat(one.lifecycle.projects().project(p).orElseThrow().canonicalGeneration())
          .isEqualTo(rounds);
      assertThat(one.count("SELECT COUNT(*) FROM promotions WHERE project_id = ?", p))
          .isEqualTo(rounds);
    }
    assertThat(one.outbox("canonical.advanced")).isEqualTo((long) rounds * projects);
    assertThat(one.outbox("artifact.promoted")).isEqualTo((long) rounds * projects);
  }

  @Test
  void twoDispatchesOfOneChangeFromTwoNodesReadyAndAdmitEachTaskOnce() throws Exception {
    one.project("pd");
    int changes = 30;
    List<TaskSpec> roots =
        IntStream.range(0, 10)
            .mapToObj(i -> new TaskSpec("t" + i, null, List.of(), List.of("path:src/t" + i)))
            .toList();
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < changes; i++) {
      ids.add(
          one.lifecycle
              .changes()
              .create("pd", "d" + i, WorkGraph.of(roots.toArray(TaskSpec[]::new)))
              .get()
              .change()
              .changeId());
    }
    List<CompletableFuture<Dispatched>> viaOne = new ArrayList<>();
    List<CompletableFuture<Dispatched>> viaTwo = new ArrayList<>();
    for (String c : ids) {
      viaOne.add(one.lifecycle.changes().dispatch(c, "cmd_dispatch_one"));
      viaTwo.add(two.lifecycle.changes().dispatch(c, "cmd_dispatch_two"));
    }
    for (int i = 0; i < changes; i++) {
      Dispatched a = viaOne.get(i).get(30, TimeUnit.SECONDS);
      Dispatched b = viaTwo.get(i).get(30, TimeUnit.SECONDS);
      String c = ids.get(i);
      // The seed's admitAgent: a second dispatch finds the Tasks ready and assigned already.
      assertThat(a.readied() + b.readied()).as("tasks readied of %s", c).isEqualTo(10);
      assertThat(a.admitted() + b.admitted()).as("agents admitted to %s", c).isEqualTo(8);
      assertThat(List.of(a.readied(), b.readied())).as("readied by each node").contains(0);
      assertThat(held(c)).isEqualTo(8);
      assertThat(one.count("SELECT COUNT(*) FROM tasks WHERE change_id = ? AND state = 'ready'", c))
          .isEqualTo(2);
    }
    assertThat(one.outbox("task.assigned")).isEqualTo(8L * changes);
  }

  /**
   * Agents per Change: 8. Each Change holds 7 Agents (its Task {@code d} running) and Task {@code
   * q} waits ready; {@code p1} and {@code p2} wait for {@code d}. Node one completes {@code d} and
   * dispatches while node two dispatches: whatever the order, 8 Agents hold Tasks, never 9.
   */
  @Test
  void theNinthAgentOfAChangeIsNotAdmittedWhenTwoNodesDispatchItAtOnce() throws Exception {
    one.project("pa");
    int changes = 30;
    List<TaskSpec> graph = new ArrayList<>();
    graph.add(new TaskSpec("d", null, List.of(), List.of()));
    for (int i = 2; i <= 8; i++) {
      graph.add(new TaskSpec("t" + i, null, List.of(), List.of()));
    }
    graph.add(new TaskSpec("p1", null, List.of("d"), List.of()));
    graph.add(new TaskSpec("p2", null, List.of("d"), List.of()));
    graph.add(new TaskSpec("q", null, List.of(), List.of()));
    List<String> ids = new ArrayList<>();
    List<TaskRef> ds = new ArrayList<>();
    for (int i = 0; i < changes; i++) {
      String c =
          one.lifecycle
              .changes()
              .create("pa", "a" + i, WorkGraph.of(graph.toArray(TaskSpec[]::new)))
              .get()
              .change()
              .changeId();
      Dispatched first = one.lifecycle.changes().dispatch(c, "cmd_first").get();
      assertThat(first.admitted()).isEqualTo(8);
      TaskRef d = wakeOf(first, c, "d");
      TaskRef t2 = wakeOf(first, c, "t2");
      one.lifecycle.agents().start(d).get();
      one.lifecycle.agents().start(t2).get();
      one.lifecycle.agents().complete(t2).get();
      assertThat(held(c)).isEqualTo(7);
      ids.add(c);
      ds.add(d);
    }
    List<CompletableFuture<?>> race = new ArrayList<>();
    for (int i = 0; i < changes; i++) {
      // Node one's lane runs the completion, then its dispatch; node two's runs beside them.
      race.add(one.lifecycle.agents().complete(ds.get(i)));
      race.add(one.lifecycle.changes().dispatch(ids.get(i), "cmd_after_d"));
      race.add(two.lifecycle.changes().dispatch(ids.get(i), "cmd_other_node"));
    }
    CompletableFuture.allOf(race.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
    for (String c : ids) {
      assertThat(held(c)).as("agents holding tasks of %s", c).isEqualTo(8);
    }
  }

  /**
   * Node two stops inside a transaction of a shard (as a core paused with SIGSTOP would: its
   * session sits idle in the transaction, holding the shard's lock). The server ends that session
   * after {@code idle_in_transaction_session_timeout}; node one's call on the shard then runs, and
   * node two, resumed, runs its transaction again after it.
   */
  @Test
  void aNodePausedWhileItHoldsAnActorsLockDelaysTheOtherNodeOnlyUntilItsSessionEnds()
      throws Exception {
    one.project("pz");
    String c =
        one.lifecycle
            .changes()
            .create(
                "pz",
                "z",
                WorkGraph.of(
                    new TaskSpec("a", null, List.of(), List.of()),
                    new TaskSpec("b", null, List.of(), List.of())))
            .get()
            .change()
            .changeId();
    ResourceShardActor shard = two.coordinator.changeEvents().shardFor("pz", "change:" + c);
    AtomicInteger attempts = new AtomicInteger();
    AtomicLong pausedSession = new AtomicLong();
    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch resume = new CountDownLatch(1);
    CompletableFuture<Integer> paused =
        shard.change(
            (tx, out) -> {
              int attempt = attempts.incrementAndGet();
              if (attempt == 1) {
                // It holds the shard's lock and no row lock, and sends nothing more.
                pausedSession.set(tx.queryLong("SELECT pg_backend_pid()"));
                holding.countDown();
                try {
                  resume.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                  throw new IllegalStateException(e);
                }
              }
              tx.update(
                  "UPDATE changes SET title = ? WHERE change_id = ?", "attempt " + attempt, c);
              return attempt;
            });
    assertThat(holding.await(30, TimeUnit.SECONDS)).isTrue();

    CompletableFuture<Dispatched> dispatch =
        one.lifecycle.changes().dispatch(c, "cmd_while_paused");
    // Node one's transaction waits for the shard's lock that the paused session holds.
    await()
        .atMost(PAUSED_SESSION_ENDS_AFTER)
        .until(
            () ->
                one.count(
                        "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                            + " AND database = (SELECT oid FROM pg_database"
                            + " WHERE datname = current_database())")
                    == 1);
    assertThat(dispatch).isNotDone();
    // The server ends the paused session; node one goes on without node two.
    assertThat(
            dispatch
                .get(PAUSED_SESSION_ENDS_AFTER.plusSeconds(10).toSeconds(), TimeUnit.SECONDS)
                .admitted())
        .isEqualTo(2);
    assertThat(
            one.count("SELECT COUNT(*) FROM pg_stat_activity WHERE pid = ?", pausedSession.get()))
        .isZero();

    resume.countDown();
    // Node two's first attempt was rolled back with its session; it ran again, after node one.
    assertThat(paused.get(30, TimeUnit.SECONDS)).isEqualTo(2);
    assertThat(one.lifecycle.changes().change(c).orElseThrow().title()).isEqualTo("attempt 2");
    assertThat(held(c)).isEqualTo(2);
  }

  private long held(String changeId) {
    return one.count(
        "SELECT COUNT(*) FROM tasks WHERE change_id = ? AND state IN ('assigned', 'running')",
        changeId);
  }

  private static TaskRef wakeOf(Dispatched d, String changeId, String key) {
    String taskId = LifecycleIds.taskId(changeId, key);
    return d.wakes().stream()
        .filter(w -> w.taskId().equals(taskId))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no wake for " + taskId))
        .task();
  }
}
