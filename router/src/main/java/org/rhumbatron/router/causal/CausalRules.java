package org.rhumbatron.router.causal;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;

/**
 * The seed's deterministic rules of {@code routeCausalBatch} that drive a Change's work graph, in
 * the seed's order: {@code task.ready} is ignored (the dispatcher already sent the wake);
 * informational types cause nothing; {@code change.created} and {@code task.completed} queue {@code
 * change.dispatch} for the Change (its newly ready Tasks); {@code task.failed} queues {@code
 * change.settle}; {@code verification.started} with reason {@code work_graph_completed} queues
 * {@code candidate.create}; {@code artifact.promoted} queues {@code index.build}, and {@code
 * canonical.advanced} queues {@code candidates.recompose} (which marks the Candidates on an earlier
 * base stale, in their shards) and {@code index.build}. Command ids derive from the Event ({@code
 * cmd_<event>_dispatch}, {@code cmd_<event>_settle}), so a redelivered batch sends nothing the
 * queue keeps twice.
 *
 * <p>The commands go out inside the claiming transaction and the batch waits for their acks: a send
 * that fails rolls the claims back, and the redelivery sends the same ids again. After {@code
 * canonical.advanced} every Agent of the project holding a Task wakes ({@code cmd_<event>_<task>}).
 * Resource overlap is issue 17's.
 */
public final class CausalRules implements CausalBatchRouter {
  private static final Duration SEND_TIMEOUT = Duration.ofSeconds(10);

  private final Function<Command, CompletableFuture<?>> commands;
  private final Clock clock;

  /** {@code commands}: core's {@code commands.send}. */
  public CausalRules(Function<Command, CompletableFuture<?>> commands, Clock clock) {
    this.commands = commands;
    this.clock = clock;
  }

  @Override
  public void routeCausalBatch(Tx tx, List<Event> fresh) throws SQLException {
    List<CompletableFuture<?>> sends = new ArrayList<>();
    for (Event e : fresh) {
      for (Command c : route(e)) {
        sends.add(send(c));
      }
      if (e.eventType() == EventType.CANONICAL_ADVANCED) {
        for (Command c : wakeActiveAgents(tx, e)) {
          sends.add(send(c));
        }
      }
    }
    if (sends.isEmpty()) {
      return;
    }
    try {
      CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new))
          .get(SEND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new IllegalStateException("a causal command was not sent: " + e.getCause(), e);
    } catch (TimeoutException e) {
      throw new IllegalStateException("causal commands not acknowledged in " + SEND_TIMEOUT, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while sending causal commands", e);
    }
  }

  /**
   * Every command the rules cause goes out here: the one place where the cap of 1,000 commands per
   * Change per UTC day (issue 17) will count {@code CommandType.countsTowardChangeCap()} types.
   */
  private CompletableFuture<?> send(Command c) {
    return commands.apply(c);
  }

  /** The commands {@code e} causes. */
  List<Command> route(Event e) {
    if (e.eventType() == EventType.TASK_READY
        || e.eventType().kind() == EventType.Kind.INFORMATIONAL) {
      return List.of();
    }
    return switch (e.eventType()) {
      case CHANGE_CREATED, TASK_COMPLETED ->
          one(command(e, CommandType.CHANGE_DISPATCH, "dispatch"));
      case TASK_FAILED -> one(command(e, CommandType.CHANGE_SETTLE, "settle"));
      case VERIFICATION_STARTED ->
          "work_graph_completed".equals(e.payload().path("reason").asText())
              ? one(command(e, CommandType.CANDIDATE_CREATE, "candidate"))
              : List.of();
      case ARTIFACT_PROMOTED -> one(projectCommand(e, CommandType.INDEX_BUILD, "index"));
      case CANONICAL_ADVANCED ->
          List.of(
              projectCommand(e, CommandType.CANDIDATES_RECOMPOSE, "recompose"),
              projectCommand(e, CommandType.INDEX_BUILD, "index"));
      default -> List.of();
    };
  }

  /**
   * After canonical.advanced, every Agent of the project that holds a Task (assigned or running)
   * wakes: {@code agent.wake} with {@code cmd_<event>_<task>}.
   */
  private List<Command> wakeActiveAgents(Tx tx, Event e) throws SQLException {
    return tx.query(
        "SELECT task_id, change_id, agent_id, attempts FROM tasks WHERE project_id = ?"
            + " AND state IN ('assigned', 'running') AND agent_id IS NOT NULL",
        rs -> {
          ObjectNode payload = JsonNodeFactory.instance.objectNode();
          payload.put("agentId", rs.getString(3));
          payload.put("attempt", rs.getInt(4));
          payload.put("reason", e.eventType().wireName());
          payload.put("eventId", e.eventId());
          return Command.builder()
              .commandId(StableIds.routerWake(e.eventId(), rs.getString(1)))
              .commandType(CommandType.AGENT_WAKE)
              .projectId(e.projectId())
              .changeId(rs.getString(2))
              .taskId(rs.getString(1))
              .createdAt(clock.instant())
              .payload(payload)
              .build();
        },
        e.projectId());
  }

  private static List<Command> one(Command c) {
    return c == null ? List.of() : List.of(c);
  }

  /** A command of the Event's project, with its generation in the payload. */
  private Command projectCommand(Event e, CommandType type, String suffix) {
    ObjectNode payload = JsonNodeFactory.instance.objectNode();
    payload.put("eventId", e.eventId());
    payload.put("eventType", e.eventType().wireName());
    if (e.canonicalGeneration() != null) {
      payload.put("generation", e.canonicalGeneration());
    }
    if (e.payload().hasNonNull("candidateId")) {
      payload.put("candidateId", e.payload().get("candidateId").asText());
    }
    return Command.builder()
        .commandId("cmd_" + e.eventId() + "_" + suffix)
        .commandType(type)
        .projectId(e.projectId())
        .changeId(e.changeId())
        .createdAt(clock.instant())
        .payload(payload)
        .build();
  }

  private Command command(Event e, CommandType type, String suffix) {
    if (e.changeId() == null) {
      return null; // a malformed lifecycle Event: nothing to dispatch
    }
    ObjectNode payload = JsonNodeFactory.instance.objectNode();
    payload.put("eventId", e.eventId());
    payload.put("eventType", e.eventType().wireName());
    if (e.taskId() != null) {
      payload.put("taskId", e.taskId()); // not the command's own: a Change command has no Task
    }
    return Command.builder()
        .commandId("cmd_" + e.eventId() + "_" + suffix)
        .commandType(type)
        .projectId(e.projectId())
        .changeId(e.changeId())
        .createdAt(clock.instant())
        .payload(payload)
        .build();
  }
}
