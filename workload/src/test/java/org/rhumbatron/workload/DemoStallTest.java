package org.rhumbatron.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.rhumbatron.workload.FailoverWatchTest.json;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/**
 * What the stall report names, from the API's answers: the real run's stuck Change (its last two
 * Tasks waited for a router batch the killed core held), and hand-made ones for the other states.
 */
class DemoStallTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void theStuckChangeOfTheRealRunWaitsForTheRouterOnItsStream() throws Exception {
    assertThat(
            DemoStall.line(
                json("change-stalled.json"),
                json("events-stalled.json"),
                json("dead-letters-none.json"),
                json("streams-stalled.json")))
        .isEqualTo(
            "chg_c9689bcfdaab9998e40dd3c4b1292b04 (open, 18 of 20 Tasks completed) waits for"
                + " t19, t20 pending with every dependency completed: the causal router to apply"
                + " the task.completed Events that make them ready; last Event task.completed"
                + " evt_79f94f6a696b074efbe7b8b69867eb1d of t17 at 2026-12-07T14:12:17.425Z;"
                + " causal-router on EVENTS_01: 86 ack-pending, ack floor 1210 of 1820"
                + " delivered");
  }

  @Test
  void aDeadLetterARunningTaskAndAReadyOneAreNamed() throws Exception {
    JsonNode change =
        JSON.readTree(
            """
            {"changeId": "chg_1", "projectId": "p", "state": "open", "tasks": [
              {"taskId": "chg_1:t01", "state": "completed", "dependsOn": []},
              {"taskId": "chg_1:t02", "state": "running", "agentId": "agent-7", "attempt": 2,
               "dependsOn": ["chg_1:t01"]},
              {"taskId": "chg_1:t03", "state": "ready", "dependsOn": ["chg_1:t01"]},
              {"taskId": "chg_1:t04", "state": "pending", "dependsOn": ["chg_1:t02"]}]}
            """);
    JsonNode deadLetters =
        JSON.readTree(
            """
            {"deadLetters": [{"id": 9, "commandType": "task.run", "commandId": "cmd_4",
              "originQueue": "agent-wakeups", "reason": "max_deliveries"}]}
            """);

    assertThat(
            DemoStall.line(
                change,
                JSON.readTree("{\"events\": []}"),
                deadLetters,
                json("streams-stalled.json")))
        .isEqualTo(
            "chg_1 (open, 1 of 4 Tasks completed) waits for dead letter 9: Command task.run"
                + " cmd_4 from agent-wakeups (max_deliveries); t02 running on agent-7"
                + " (attempt 2): the Agent's report; t03 ready: an Agent's wake (a Command on"
                + " q-agent-wakeups)");
  }

  @Test
  void aChangePastItsTasksWaitsForItsVerdictApprovalOrRelease() throws Exception {
    JsonNode none = JSON.readTree("{\"deadLetters\": []}");
    JsonNode noEvents = JSON.readTree("{\"events\": []}");
    JsonNode noStreams = JSON.readTree("{\"streams\": []}");
    assertThat(DemoStall.line(change("verifying"), noEvents, none, noStreams))
        .endsWith("waits for its verification verdict (a Command on q-verification)");
    assertThat(DemoStall.line(change("awaiting_approval"), noEvents, none, noStreams))
        .endsWith("waits for an operator's approval");
    assertThat(DemoStall.line(change("releasing"), noEvents, none, noStreams))
        .endsWith("waits for its release (a Command on q-release)");
    assertThat(DemoStall.line(change("open"), noEvents, none, noStreams))
        .endsWith("waits for its verification to start (a Command on q-verification)");
  }

  private static JsonNode change(String state) throws Exception {
    return JSON.readTree(
        "{\"changeId\": \"chg_2\", \"projectId\": \"p\", \"state\": \""
            + state
            + "\", \"tasks\": [{\"taskId\": \"chg_2:t01\", \"state\": \"completed\"}]}");
  }
}
