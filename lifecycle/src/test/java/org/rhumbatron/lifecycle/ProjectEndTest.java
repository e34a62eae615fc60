package org.rhumbatron.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.coordinator.project.ProjectRootActor.Promotion;
import org.rhumbatron.lifecycle.candidates.CandidateLedger;
import org.rhumbatron.lifecycle.candidates.Composition;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.Wake;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.lifecycle.changes.WorkGraph.TaskSpec;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * A deleted or archived Project keeps nothing going: its open Changes end {@code cancelled} with
 * {@code project_deleted} / {@code project_archived} through the Change's end (its Tasks cancelled,
 * its Agents stopped, its claims released), an approval is refused and its canonical generation
 * never advances. SQLite and PostgreSQL.
 */
class ProjectEndTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  private LifecycleFixture f;
  private Lifecycle lifecycle;
  private final List<String> stops = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() throws Exception {
    f = new LifecycleFixture(nats.url(), db().url(), Map.of());
    lifecycle = f.lifecycle;
    lifecycle.ends().whenTaskStops((task, reason) -> stops.add(task.taskId() + " " + reason));
    f.project("p1");
  }

  @AfterEach
  void stop() {
    f.close();
  }

  /** A Change of two Tasks run to verifying, its Candidate verified: awaiting approval. */
  private String awaitingApproval(String request) throws Exception {
    String c = f.verifying("p1", request);
    Composition comp = lifecycle.approvals().compose(c, "cmd_cc_" + c, false).get();
    lifecycle.approvals().recordVerdict(comp.candidateId(), true, null, "cmd_v_" + c).get();
    assertThat(lifecycle.changes().change(c).orElseThrow().state()).isEqualTo("awaiting_approval");
    return c;
  }

  /** A Change whose first Task runs with a claim. */
  private String running(String request) throws Exception {
    String c =
        lifecycle
            .changes()
            .create(
                "p1",
                request,
                WorkGraph.of(new TaskSpec("a", null, List.of(), List.of("path:src/run/"))))
            .get()
            .change()
            .changeId();
    Wake w = lifecycle.changes().dispatch(c, "cmd_run").get().wakes().get(0);
    lifecycle.agents().start(w.task()).get();
    lifecycle.agents().acquireClaim(w.task(), "path:src/run/").get();
    return c;
  }

  private void endsTheProjectsChanges(boolean delete) throws Exception {
    String reason = delete ? "project_deleted" : "project_archived";
    String waiting = awaitingApproval("r1");
    String run = running("r2");
    String candidate =
        f.database
            .read(tx -> CandidateLedger.verifiedCandidate(tx, waiting))
            .orElseThrow()
            .candidateId();

    assertThat(
            (delete ? lifecycle.projects().delete("p1") : lifecycle.projects().archive("p1")).get())
        .isTrue();

    for (String c : List.of(waiting, run)) {
      ChangeInfo info = lifecycle.changes().change(c).orElseThrow();
      assertThat(info.state()).as(c).isEqualTo("cancelled");
      assertThat(info.reason()).as(c).isEqualTo(reason);
    }
    assertThat(f.outbox("change.cancelled")).isEqualTo(2);
    assertThat(lifecycle.changes().task(run + ":a").orElseThrow().state()).isEqualTo("cancelled");
    assertThat(stops).containsExactly(run + ":a change_cancelled");
    assertThat(f.count("SELECT COUNT(*) FROM claims WHERE state = 'held'")).isZero();

    assertThatThrownBy(() -> lifecycle.approvals().approve(waiting).get())
        .hasMessageContaining("is cancelled");
    // The root refuses too, should a promotion reach it: the generation stays where it was.
    assertThat(f.coordinator.root("p1").decidePromotion(candidate, 0, waiting, "late").get())
        .extracting(d -> d.promotion())
        .isEqualTo(Promotion.PROJECT_NOT_ACTIVE);
    assertThat(lifecycle.projects().project("p1").orElseThrow().canonicalGeneration()).isZero();
    assertThat(f.outbox("canonical.advanced")).isZero();
    assertThat(f.outbox("artifact.promoted")).isZero();
  }

  @DatabaseTest
  void deletingAProjectCancelsItsOpenChangesAndNothingOfItIsPromoted() throws Exception {
    endsTheProjectsChanges(true);
  }

  @DatabaseTest
  void archivingAProjectCancelsItsOpenChangesAndNothingOfItIsPromoted() throws Exception {
    endsTheProjectsChanges(false);
  }

  @DatabaseTest
  void aChangeAwaitingApprovalWhenItsProjectIsDeletedUnderTheApprovalEndsWithIt() throws Exception {
    String waiting = awaitingApproval("r1");
    // The delete lands between the approval's checks and the root's decision: the root refuses,
    // and the approval ends the Change with its Project.
    f.database.inTransaction(
        tx -> tx.update("UPDATE projects SET status = 'deleted' WHERE project_id = 'p1'"));
    assertThatThrownBy(() -> lifecycle.approvals().approve(waiting).get())
        .hasMessageContaining("project p1 is deleted");
    ChangeInfo info = lifecycle.changes().change(waiting).orElseThrow();
    assertThat(info.state()).isEqualTo("cancelled");
    assertThat(info.reason()).isEqualTo("project_deleted");
    assertThat(lifecycle.projects().project("p1").orElseThrow().canonicalGeneration()).isZero();
    assertThat(f.outbox("canonical.advanced")).isZero();
  }

  @DatabaseTest
  void anActiveProjectsChangesAreLeftAlone() throws Exception {
    String run = running("r1");
    assertThat(lifecycle.projects().endChanges("p1", null).get()).isZero();
    assertThat(lifecycle.changes().change(run).orElseThrow().state()).isEqualTo("open");
  }
}
