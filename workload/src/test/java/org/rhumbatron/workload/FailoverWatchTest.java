package org.rhumbatron.workload;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.testkit.SettableClock;

/**
 * The demo's failover watch on the API's answers of a real 3-core run (src/test/resources/
 * failover): its killed core held five duties and the router batches of two streams, which came
 * back only with the seed's redelivery; one Change waited for them.
 */
class FailoverWatchTest {
  static final String KILLED = "demo-core-3-mxdcm1vb";
  static final String STUCK = "chg_c9689bcfdaab9998e40dd3c4b1292b04";

  @Test
  void dutiesMoveWhenEveryDutyIsHeldByALiveNodeOtherThanTheKilledOne() throws IOException {
    assertThat(FailoverWatch.dutiesHeldByLiveNodes(json("cluster-before-kill.json"), KILLED))
        .isFalse();
    JsonNode after = json("cluster-after-takeover.json");
    assertThat(FailoverWatch.dutiesHeldByLiveNodes(after, KILLED)).isTrue();

    ((ObjectNode) after.path("duties").get(0)).put("owner", KILLED);
    assertThat(FailoverWatch.dutiesHeldByLiveNodes(after, KILLED))
        .as("a duty still on the lost node")
        .isFalse();
    ((ObjectNode) after.path("duties").get(0)).putNull("owner");
    assertThat(FailoverWatch.dutiesHeldByLiveNodes(after, KILLED)).as("nobody's").isFalse();
  }

  @Test
  void inFlightIsWhatAQueueConsumerHadDeliveredAtTheKillAndHasNotAcked() throws IOException {
    Map<String, FailoverWatch.Consumer> atKill =
        FailoverWatch.byKey(FailoverWatch.consumers(json("streams-at-kill.json")));

    assertThat(FailoverWatch.unacked(atKill, FailoverWatch.consumers(json("streams-stalled.json"))))
        .as(
            "the event streams' consumers are not asked (their new holder applies the dead"
                + " node's deliveries from the stream), q-release and q-dead-letter have an ack"
                + " floor below but nothing ack-pending")
        .isEmpty();

    FailoverWatch.Consumer wakeupsAtKill =
        new FailoverWatch.Consumer("COMMANDS", "q-agent-wakeups", 4, 900, 910);
    Map<String, FailoverWatch.Consumer> withQueue = new java.util.LinkedHashMap<>(atKill);
    withQueue.put(wakeupsAtKill.key(), wakeupsAtKill);
    assertThat(
            FailoverWatch.unacked(
                withQueue,
                List.of(new FailoverWatch.Consumer("COMMANDS", "q-agent-wakeups", 2, 905, 930))))
        .containsExactly(
            "q-agent-wakeups on COMMANDS: ack floor 905 below 910 delivered at the kill,"
                + " 2 ack-pending");
    assertThat(
            FailoverWatch.unacked(
                withQueue,
                List.of(new FailoverWatch.Consumer("COMMANDS", "q-agent-wakeups", 2, 912, 930))))
        .as("its ack floor passed what it had delivered at the kill")
        .isEmpty();
  }

  @Test
  void aChangeOpenAtTheKillMovesByStateTaskOrEventOrEnds() throws IOException {
    Map<String, FailoverWatch.ChangeMark> atKill = openAtKill();
    assertThat(atKill).hasSize(12);
    Map<String, FailoverWatch.ChangeMark> stalled = marks(json("changes-stalled.json"), -1);

    assertThat(FailoverWatch.unmoved(atKill, stalled))
        .containsExactly(STUCK + " (open) has not moved since the kill");

    stalled.put(STUCK, new FailoverWatch.ChangeMark(STUCK, "open", 18, 222));
    assertThat(FailoverWatch.unmoved(atKill, stalled)).as("one Event more").isEmpty();
  }

  @Test
  void theWatchTimesTheDutiesAndTheInFlightWorkFromTheKill() throws IOException {
    SettableClock clock = new SettableClock();
    FailoverWatch watch =
        new FailoverWatch(null, List.of(), clock, FailoverWatch.allowance(Settings.defaults()));
    watch.atKill(openAtKill(), json("streams-at-kill.json"));
    watch.killed(KILLED, 5);
    assertThat(watch.settledAtMillis()).as("the stall clock stops").isEqualTo(Long.MAX_VALUE);

    clock.advance(Duration.ofMillis(3_200));
    Map<String, FailoverWatch.ChangeMark> stalled = marks(json("changes-stalled.json"), -1);
    watch.observe(
        clock.millis(), json("cluster-after-takeover.json"), json("streams-stalled.json"), stalled);
    clock.advance(Duration.ofSeconds(300));
    JsonNode redelivered = json("streams-stalled.json");
    for (JsonNode s : redelivered.path("streams")) {
      for (JsonNode c : s.path("consumers")) {
        ((ObjectNode) c).put("ackPending", 0);
      }
    }
    watch.observe(clock.millis(), json("cluster-after-takeover.json"), redelivered, stalled);
    FailoverWatch.Result half = watch.result();
    assertThat(half.dutiesMovedMillis()).isEqualTo(3_200);
    assertThat(half.inFlightHandledMillis()).as("the stuck Change has not moved").isEqualTo(-1);
    assertThat(half.waiting()).containsExactly(STUCK + " (open) has not moved since the kill");

    clock.advance(Duration.ofMillis(500));
    stalled.put(STUCK, new FailoverWatch.ChangeMark(STUCK, "verifying", 20, -1));
    watch.observe(clock.millis(), json("cluster-after-takeover.json"), redelivered, stalled);
    watch.end();

    FailoverWatch.Result done = watch.result();
    assertThat(done.dutiesMovedMillis()).isEqualTo(3_200);
    assertThat(done.inFlightHandledMillis()).isEqualTo(303_700);
    assertThat(done.waiting()).isEmpty();
    assertThat(done.watchedMillis()).isEqualTo(303_700);
    assertThat(watch.settledAtMillis()).isEqualTo(clock.millis());
    assertThat(done.cutShort()).isFalse();
  }

  @Test
  void theAllowanceLetsTheLeasesExpireAndTheLongestAckWaitRedeliver() {
    // 3 x 6 s of lease, then router.ack-wait's 5 min (longer than queues.ack-wait's 6 s).
    assertThat(FailoverWatch.allowance(Settings.defaults())).isEqualTo(Duration.ofSeconds(318));
  }

  @Test
  void theStallClockRunsFromTheFailoversEnd() {
    long minute = 60_000;
    assertThat(DemoRun.stalled(10 * minute, 0, Long.MAX_VALUE)).as("failover running").isFalse();
    assertThat(DemoRun.stalled(7 * minute, 0, 5 * minute)).isFalse();
    assertThat(DemoRun.stalled(8 * minute + 1, 0, 5 * minute)).isTrue();
    assertThat(DemoRun.stalled(3 * minute + 1, 0, 0)).as("no failover").isTrue();
  }

  /** The Changes open at the kill, each with the count of Events it had then. */
  private static Map<String, FailoverWatch.ChangeMark> openAtKill() throws IOException {
    Map<String, FailoverWatch.ChangeMark> out = new LinkedHashMap<>();
    for (FailoverWatch.ChangeMark m : marks(json("changes-at-kill.json"), 221).values()) {
      if (!m.ended()) {
        out.put(m.changeId(), m);
      }
    }
    return out;
  }

  private static Map<String, FailoverWatch.ChangeMark> marks(JsonNode list, long events) {
    Map<String, FailoverWatch.ChangeMark> out = new LinkedHashMap<>();
    for (FailoverWatch.ChangeMark m : FailoverWatch.changes(list)) {
      out.put(
          m.changeId(),
          new FailoverWatch.ChangeMark(m.changeId(), m.state(), m.tasksCompleted(), events));
    }
    return out;
  }

  static JsonNode json(String name) throws IOException {
    try (InputStream in = FailoverWatchTest.class.getResourceAsStream("/failover/" + name)) {
      return new ObjectMapper().readTree(in);
    }
  }
}
