package org.rhumbatron.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.coordinator.project.ProjectRootActor.Promotion;
import org.rhumbatron.lifecycle.candidates.Approval;
import org.rhumbatron.lifecycle.candidates.Composition;
import org.rhumbatron.lifecycle.changes.Dispatched;
import org.rhumbatron.lifecycle.changes.Wake;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.lifecycle.changes.WorkGraph.TaskSpec;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/** Verdicts, approval and promotion on a real nats-server and database; SQLite and PostgreSQL. */
class PromotionTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  private LifecycleFixture f;
  private Lifecycle lifecycle;

  @BeforeEach
  void start() throws Exception {
    f = new LifecycleFixture(nats.url(), db().url(), Map.of());
    lifecycle = f.lifecycle;
    f.project("p1");
  }

  @AfterEach
  void stop() {
    f.close();
  }

  /** A Change of two Tasks run to verifying by its Agents. */
  private String composed(String request) throws Exception {
    return f.verifying("p1", request);
  }

  private String candidateOf(String changeId) throws Exception {
    Composition comp = lifecycle.approvals().compose(changeId, "cmd_cc_" + changeId, false).get();
    assertThat(comp.outcome()).isEqualTo(Composition.Outcome.COMPOSED);
    return comp.candidateId();
  }

  @DatabaseTest
  void aVerifiedCandidateAwaitsApprovalAndItsApprovalPromotesAndCompletesTheChange()
      throws Exception {
    String c = composed("r1");
    String cand = candidateOf(c);
    assertThat(lifecycle.approvals().recordVerdict(cand, true, null, "cmd_v").get()).isTrue();
    assertThat(lifecycle.approvals().recordVerdict(cand, true, null, "cmd_v").get()).isFalse();
    assertThat(lifecycle.changes().change(c).orElseThrow().state()).isEqualTo("awaiting_approval");
    Approval approval = lifecycle.approvals().approve(c).get();
    assertThat(approval.promotion()).isEqualTo(Promotion.PROMOTED);
    assertThat(approval.generation()).isEqualTo(1);
    assertThat(approval.releaseId()).isNull(); // no live app: completed at promotion
    assertThat(lifecycle.changes().change(c).orElseThrow().state()).isEqualTo("completed");
    assertThat(lifecycle.projects().project("p1").orElseThrow().canonicalGeneration()).isEqualTo(1);
    assertThat(f.outbox("artifact.promoted")).isEqualTo(1);
    assertThat(f.outbox("canonical.advanced")).isEqualTo(1);
    assertThat(f.outbox("candidate.promoted")).isEqualTo(1);
    assertThat(f.outbox("change.completed")).isEqualTo(1);
    // The root answers a second promotion of the same Candidate without writing anything.
    assertThat(f.coordinator.root("p1").decidePromotion(cand, 0, c, "again").get().promotion())
        .isEqualTo(Promotion.ALREADY_PROMOTED);
    assertThat(f.outbox("canonical.advanced")).isEqualTo(1);
    assertThatThrownBy(() -> lifecycle.approvals().approve(c).get())
        .hasMessageContaining("is completed: only a Change awaiting approval can be approved");
  }

  @DatabaseTest
  void twoChangesRacingOnOneBaseOnePromotesTheOtherRebasesAndPromotesAtGenerationTwo()
      throws Exception {
    String a = composed("ra");
    String b = composed("rb");
    String candA = candidateOf(a);
    String candB = candidateOf(b);
    lifecycle.approvals().recordVerdict(candA, true, null, "cmd_va").get();
    lifecycle.approvals().recordVerdict(candB, true, null, "cmd_vb").get();
    assertThat(lifecycle.approvals().approve(a).get().promotion()).isEqualTo(Promotion.PROMOTED);
    Approval late = lifecycle.approvals().approve(b).get();
    assertThat(late.promotion()).isEqualTo(Promotion.STALE_BASE);
    assertThat(lifecycle.changes().change(b).orElseThrow().state()).isEqualTo("verifying");
    assertThat(f.count("SELECT COUNT(*) FROM candidates WHERE state = 'stale'")).isEqualTo(1);
    assertThat(f.commandsOn(Queue.VERIFICATION)).isEqualTo(1); // candidate.create after a rebase
    String recomposed = candidateOf(b);
    assertThat(recomposed).isNotEqualTo(candB);
    assertThat(f.count("SELECT base_generation FROM candidates WHERE candidate_id = ?", recomposed))
        .isEqualTo(1);
    lifecycle.approvals().recordVerdict(recomposed, true, null, "cmd_vb2").get();
    Approval second = lifecycle.approvals().approve(b).get();
    assertThat(second.promotion()).isEqualTo(Promotion.PROMOTED);
    assertThat(second.generation()).isEqualTo(2);
    assertThat(lifecycle.changes().change(b).orElseThrow().state()).isEqualTo("completed");
    assertThat(f.outbox("canonical.advanced")).isEqualTo(2);
  }

  @DatabaseTest
  void aCandidateTheRootPromotedNeverGoesStaleWhenTheRecomposeComesFirst() throws Exception {
    String c = composed("r1");
    String cand = candidateOf(c);
    lifecycle.approvals().recordVerdict(cand, true, null, "cmd_v").get();
    // The root has advanced the generation; candidates.recompose (caused by canonical.advanced)
    // reaches the Change's shard before the approval's second step does.
    assertThat(f.coordinator.root("p1").decidePromotion(cand, 0, c, "approve").get().promotion())
        .isEqualTo(Promotion.PROMOTED);
    assertThat(lifecycle.approvals().stale(cand, "cmd_recompose").get()).isFalse();
    assertThat(f.outbox("candidate.stale")).isZero();
    assertThat(lifecycle.changes().change(c).orElseThrow().state()).isEqualTo("awaiting_approval");
    // The approval finishes: the root answers already_promoted and the Change completes once.
    assertThat(lifecycle.approvals().approve(c).get().promotion())
        .isEqualTo(Promotion.ALREADY_PROMOTED);
    assertThat(lifecycle.changes().change(c).orElseThrow().state()).isEqualTo("completed");
    assertThat(f.outbox("canonical.advanced")).isEqualTo(1);
  }

  @DatabaseTest
  void withALiveAppThePromotedChangeIsReleasingWithItsReleaseRow() throws Exception {
    lifecycle.projects().setLiveApp("p1", true, "cmd_app").get();
    String c = composed("r1");
    String cand = candidateOf(c);
    lifecycle.approvals().recordVerdict(cand, true, null, "cmd_v").get();
    Approval approval = lifecycle.approvals().approve(c).get();
    assertThat(approval.releaseId()).isEqualTo("rel_p1_1");
    assertThat(lifecycle.changes().change(c).orElseThrow().state()).isEqualTo("releasing");
    assertThat(f.count("SELECT COUNT(*) FROM releases WHERE release_id = 'rel_p1_1'")).isEqualTo(1);
  }

  @DatabaseTest
  void aDeclinedChangeEndsDeclinedOnceAndARejectedCandidateLeavesItVerifying() throws Exception {
    String c = composed("r1");
    String cand = candidateOf(c);
    assertThatThrownBy(() -> lifecycle.approvals().decline(c).get())
        .hasMessageContaining("is verifying: only a Change awaiting approval can be declined");
    lifecycle.approvals().recordVerdict(cand, true, null, "cmd_v").get();
    assertThat(lifecycle.approvals().decline(c).get()).isTrue();
    assertThat(lifecycle.approvals().decline(c).get()).isFalse();
    assertThat(lifecycle.changes().change(c).orElseThrow().state()).isEqualTo("declined");
    assertThat(f.outbox("change.declined")).isEqualTo(1);
    String d = composed("r2");
    String rejected = candidateOf(d);
    assertThat(lifecycle.approvals().recordVerdict(rejected, false, "tests failed", "cmd_v2").get())
        .isTrue();
    assertThat(lifecycle.changes().change(d).orElseThrow().state()).isEqualTo("verifying");
    assertThat(f.outbox("candidate.rejected")).isEqualTo(1);
  }

  @DatabaseTest
  void aForkOfThreeVariantsPromotesOneAndTheOtherTwoAreNotSelected() throws Exception {
    String parent = composed("parent");
    List<String> variants = new java.util.ArrayList<>();
    for (String v : List.of("v1", "v2", "v3")) {
      String id =
          lifecycle
              .changes()
              .fork(
                  parent,
                  v,
                  "variant " + v,
                  WorkGraph.of(new TaskSpec("x", null, List.of(), List.of("path:src/" + v))))
              .get()
              .change()
              .changeId();
      variants.add(id);
    }
    assertThat(lifecycle.changes().openSiblings(variants.get(0)))
        .containsExactlyInAnyOrder(variants.get(1), variants.get(2));
    // Run the first variant to approval and promote it.
    String winner = variants.get(0);
    for (int round = 0; ; round++) {
      Dispatched d = lifecycle.changes().dispatch(winner, "cmd_w_" + round).get();
      if (d.verification()) {
        break;
      }
      for (Wake w : d.wakes()) {
        lifecycle.agents().start(w.task()).get();
        lifecycle.agents().proposeChangeset(w.task()).get();
        lifecycle.agents().complete(w.task()).get();
      }
    }
    lifecycle.approvals().recordVerdict(candidateOf(winner), true, null, "cmd_vw").get();
    assertThat(lifecycle.approvals().approve(winner).get().promotion())
        .isEqualTo(Promotion.PROMOTED);
    assertThat(lifecycle.changes().change(winner).orElseThrow().state()).isEqualTo("completed");
    for (String loser : variants.subList(1, 3)) {
      assertThat(lifecycle.changes().change(loser).orElseThrow().state()).isEqualTo("not_selected");
      assertThat(lifecycle.changes().change(loser).orElseThrow().reason()).contains(winner);
    }
    assertThat(f.outbox("change.not_selected")).isEqualTo(2);
    assertThatThrownBy(
            () ->
                lifecycle
                    .changes()
                    .fork(
                        "chg_none",
                        "v9",
                        null,
                        WorkGraph.of(new TaskSpec("x", null, List.of(), List.of())))
                    .get())
        .hasMessageContaining("unknown change chg_none");
  }
}
