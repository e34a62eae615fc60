package org.rhumbatron.platform.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The seed's retries and dead-letter rule, on a queue with 3 retries and a 5 s retry delay. */
class DeliveryPolicyTest {
  private final DeliveryPolicy policy = new DeliveryPolicy(3, Duration.ofSeconds(5));

  @Test
  void aRetryRedeliversAfterTheQueueDelayUntilTheLastRetry() {
    for (long run = 1; run <= 3; run++) {
      assertThat(policy.afterRun(run, Outcome.retry()))
          .as("run %d", run)
          .isEqualTo(new DeliveryPolicy.Redeliver(Duration.ofSeconds(5)));
    }
    assertThat(policy.afterRun(4, Outcome.retry(null, "down")))
        .as("run 4 is the third retry's: the dead-letter queue")
        .isEqualTo(new DeliveryPolicy.GiveUp("down"));
  }

  @Test
  void aRetryWithItsOwnDelayKeepsIt() {
    assertThat(policy.afterRun(1, Outcome.retry(Duration.ofMillis(200), "busy")))
        .isEqualTo(new DeliveryPolicy.Redeliver(Duration.ofMillis(200)));
  }

  @Test
  void aRejectGoesToTheDeadLetterQueueAtOnce() {
    assertThat(policy.afterRun(1, Outcome.reject("no base")))
        .isEqualTo(new DeliveryPolicy.GiveUp("no base"));
  }

  @Test
  void anAckAndARefusalSettle() {
    assertThat(policy.afterRun(1, Outcome.ack())).isEqualTo(new DeliveryPolicy.Settle(null));
    assertThat(policy.afterRun(4, Outcome.refuse("project deleted")))
        .isEqualTo(new DeliveryPolicy.Settle("project deleted"));
  }

  @Test
  void runsThatWereNeverSettledGetThreeMoreBeforeTheMessageIsGivenUpUnhandled() {
    assertThat(policy.beforeRun(1)).isNull();
    assertThat(policy.beforeRun(7)).as("4 runs and 3 unsettled ones").isNull();
    assertThat(policy.beforeRun(8).reason())
        .isEqualTo(
            "handler run 8 is past the last of 3 retries and 3 more: earlier runs were not"
                + " settled in time (ack wait or hold limit)");
  }

  @Test
  void negativeRetriesAreRefused() {
    assertThatThrownBy(() -> new DeliveryPolicy(-1, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("-1");
  }
}
