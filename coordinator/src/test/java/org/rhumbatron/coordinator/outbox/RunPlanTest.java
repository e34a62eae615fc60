package org.rhumbatron.coordinator.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.rhumbatron.coordinator.actor.ActorAddress;

/** The seed's publish order and per-project cap, on rows made by hand. */
class RunPlanTest {
  private static final long NOW = 10_000;
  private static final ActorAddress A = new ActorAddress("root", "a");
  private static final ActorAddress B = new ActorAddress("root", "b");

  private static WaitingRow pending(long seq, ActorAddress actor, String project) {
    return new WaitingRow(
        seq, actor, project, "evt_" + seq, new byte[0], OutboxRowState.PENDING, 0, 0, null);
  }

  private static WaitingRow retryAt(long seq, ActorAddress actor, String project, long at) {
    return new WaitingRow(
        seq, actor, project, "evt_" + seq, new byte[0], OutboxRowState.RETRY_WAIT, 2, at, null);
  }

  private static List<Long> seqs(List<WaitingRow> rows) {
    return rows.stream().map(WaitingRow::seq).toList();
  }

  @Test
  void aRetryNotDueHoldsBackTheLaterRowsOfItsActorOnly() {
    RunPlan plan =
        RunPlan.of(
            List.of(
                pending(1, A, "p"),
                retryAt(2, A, "p", NOW + 1),
                pending(3, A, "p"),
                pending(4, B, "q")),
            NOW,
            true,
            true,
            100);
    assertThat(seqs(plan.toSend())).containsExactly(1L, 4L);
    assertThat(plan.held()).containsExactly(A);
    assertThat(plan.dueRetries()).isEmpty();
    assertThat(plan.sendsAll(4)).isFalse();
  }

  @Test
  void aDueRetryGoesBackToPendingAndOutInOrder() {
    RunPlan plan =
        RunPlan.of(List.of(retryAt(1, A, "p", NOW), pending(2, A, "p")), NOW, true, true, 100);
    assertThat(seqs(plan.dueRetries())).containsExactly(1L);
    assertThat(seqs(plan.toSend())).containsExactly(1L, 2L);
    assertThat(plan.sendsAll(2)).isTrue();
  }

  @Test
  void aProjectOverTheCapWaitsForTheNextRunWithItsActorsLaterRows() {
    RunPlan plan =
        RunPlan.of(
            List.of(
                pending(1, A, "p"),
                pending(2, A, "p"),
                pending(3, B, "p"),
                pending(4, B, "p"),
                pending(5, A, "q")),
            NOW,
            true,
            true,
            2);
    // A's row of project q goes: only the actor whose row was over the cap waits.
    assertThat(seqs(plan.toSend())).containsExactly(1L, 2L, 5L);
    assertThat(plan.capped()).isTrue();
    assertThat(plan.held()).containsExactly(B);
  }

  @Test
  void withoutAProducerBindingEveryRowFails() {
    RunPlan plan =
        RunPlan.of(List.of(pending(1, A, "p"), retryAt(2, B, "q", NOW - 1)), NOW, false, true, 100);
    assertThat(seqs(plan.unbound())).containsExactly(1L, 2L);
    assertThat(seqs(plan.dueRetries())).containsExactly(2L);
    assertThat(plan.toSend()).isEmpty();
  }

  @Test
  void whileDisconnectedNothingIsSent() {
    RunPlan plan = RunPlan.of(List.of(pending(1, A, "p")), NOW, true, false, 100);
    assertThat(plan.toSend()).isEmpty();
    assertThat(plan.disconnected()).isTrue();
  }
}
