package org.rhumbatron.workload;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.rhumbatron.lifecycle.changes.ChangeState;
import org.rhumbatron.lifecycle.tasks.TaskState;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.Queue;

/**
 * Names what a stalled demo waits for, one line per open Change, from what the API gives an
 * operator: the Change and its Tasks, its last Event, its open dead letters, and the consumers of
 * its project's stream that hold deliveries unacknowledged.
 */
final class DemoStall {
  private DemoStall() {}

  /** A line for each Change of {@code projects} that has not ended. */
  static List<String> describe(DemoApi api, List<String> projects)
      throws IOException, InterruptedException {
    JsonNode streams = api.streams();
    List<String> out = new ArrayList<>();
    for (String project : projects) {
      for (FailoverWatch.ChangeMark m : FailoverWatch.changes(api.changes(project))) {
        if (!m.ended()) {
          out.add(
              line(
                  api.change(m.changeId()),
                  api.events(m.changeId()),
                  api.deadLetters(m.changeId()),
                  streams));
        }
      }
    }
    return out;
  }

  /**
   * "{@code <changeId>} ({@code <state>}, n of m Tasks completed) waits for ...; last Event ...":
   * {@code change} is {@code GET /api/changes/{id}} (with its Tasks), {@code events} its Events,
   * {@code deadLetters} its open dead letters, {@code streams} {@code GET /api/streams}.
   */
  static String line(JsonNode change, JsonNode events, JsonNode deadLetters, JsonNode streams) {
    String state = change.path("state").asText();
    List<JsonNode> tasks = new ArrayList<>();
    change.path("tasks").forEach(tasks::add);
    long completed = tasks.stream().filter(t -> taskState(t) == TaskState.COMPLETED).count();
    StringBuilder b = new StringBuilder(change.path("changeId").asText());
    b.append(" (")
        .append(state)
        .append(", ")
        .append(completed)
        .append(" of ")
        .append(tasks.size())
        .append(" Tasks completed) waits for ")
        .append(String.join("; ", waitsFor(state, tasks, deadLetters)));
    JsonNode last = events.path("events").path(events.path("events").size() - 1);
    if (!last.isMissingNode()) {
      b.append("; last Event ")
          .append(last.path("eventType").asText())
          .append(' ')
          .append(last.path("eventId").asText())
          .append(last.path("taskId").isTextual() ? " of " + key(last.path("taskId")) : "")
          .append(" at ")
          .append(last.path("recordedAt").asText());
    }
    String stream =
        EventStreams.streamName(EventStreams.streamIndex(change.path("projectId").asText()));
    for (FailoverWatch.Consumer c : FailoverWatch.consumers(streams)) {
      if (c.stream().equals(stream) && c.ackPending() > 0) {
        b.append("; ")
            .append(c.key())
            .append(": ")
            .append(c.ackPending())
            .append(" ack-pending, ack floor ")
            .append(c.ackFloor())
            .append(" of ")
            .append(c.delivered())
            .append(" delivered");
      }
    }
    return b.toString();
  }

  /** The Commands and Events the Change's state and Tasks wait for. */
  private static List<String> waitsFor(String state, List<JsonNode> tasks, JsonNode deadLetters) {
    List<String> out = new ArrayList<>();
    for (JsonNode d : deadLetters.path("deadLetters")) {
      out.add(
          "dead letter "
              + d.path("id").asText()
              + ": Command "
              + d.path("commandType").asText()
              + " "
              + d.path("commandId").asText()
              + " from "
              + d.path("originQueue").asText()
              + " ("
              + d.path("reason").asText()
              + ")");
    }
    switch (ChangeState.valueOf(state.toUpperCase(Locale.ROOT))) {
      case VERIFYING -> out.add("its verification verdict (" + onQueue(Queue.VERIFICATION) + ")");
      case AWAITING_APPROVAL -> out.add("an operator's approval");
      case RELEASING -> out.add("its release (" + onQueue(Queue.RELEASE) + ")");
      case OPEN -> out.addAll(openTasks(tasks));
      default -> {}
    }
    return out.isEmpty() ? List.of("nothing the API shows") : out;
  }

  private static List<String> openTasks(List<JsonNode> tasks) {
    Map<String, JsonNode> byId = new HashMap<>();
    tasks.forEach(t -> byId.put(t.path("taskId").asText(), t));
    List<String> out = new ArrayList<>();
    List<String> unblocked = new ArrayList<>();
    for (JsonNode t : tasks) {
      String key = key(t.path("taskId"));
      switch (taskState(t)) {
        case READY ->
            out.add(key + " ready: an Agent's wake (" + onQueue(Queue.AGENT_WAKEUPS) + ")");
        case ASSIGNED, RUNNING ->
            out.add(
                key
                    + " "
                    + t.path("state").asText()
                    + " on "
                    + t.path("agentId").asText()
                    + " (attempt "
                    + t.path("attempt").asText()
                    + "): the Agent's report");
        case BLOCKED -> out.add(key + " blocked: " + t.path("lastError").asText("a dead letter"));
        case PENDING -> {
          boolean depsDone = true;
          for (JsonNode dep : t.path("dependsOn")) {
            JsonNode d = byId.get(dep.asText());
            depsDone &= d != null && taskState(d) == TaskState.COMPLETED;
          }
          if (depsDone) {
            unblocked.add(key);
          }
        }
        default -> {}
      }
    }
    if (!unblocked.isEmpty()) {
      out.add(
          String.join(", ", unblocked)
              + " pending with every dependency completed: the causal router to apply the"
              + " task.completed Events that make them ready");
    }
    if (out.isEmpty() && tasks.stream().allMatch(t -> taskState(t) == TaskState.COMPLETED)) {
      out.add("its verification to start (" + onQueue(Queue.VERIFICATION) + ")");
    }
    return out;
  }

  private static TaskState taskState(JsonNode task) {
    return TaskState.valueOf(task.path("state").asText().toUpperCase(Locale.ROOT));
  }

  private static String onQueue(Queue queue) {
    return "a Command on " + queue.durableName();
  }

  /** A Task id's key, {@code t19} of {@code chg_...:t19}. */
  private static String key(JsonNode taskId) {
    String id = taskId.asText();
    return id.substring(id.lastIndexOf(':') + 1);
  }
}
