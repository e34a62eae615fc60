package org.rhumbatron.router.causal;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
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

/**
 * The seed's deterministic rules of {@code routeCausalBatch} that drive a Change's work graph, in
 * the seed's order: {@code task.ready} is ignored (the dispatcher already sent the wake);
 * informational types cause nothing; {@code change.created} and {@code task.completed} queue {@code
 * change.dispatch} for the Change (its newly ready Tasks); {@code task.failed} queues {@code
 * change.settle}; {@code verification.started} with reason {@code work_graph_completed} queues
 * {@code candidate.create}. Command ids derive from the Event ({@code cmd_<event>_dispatch}, {@code
 * cmd_<event>_settle}), so a redelivered batch sends nothing the queue keeps twice.
 *
 * <p>The commands go out inside the claiming transaction and the batch waits for their acks: a send
 * that fails rolls the claims back, and the redelivery sends the same ids again. The rules of later
 * issues (canonical.advanced, resource overlap) route nothing yet.
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
  public void routeCausalBatch(Tx tx, List<Event> fresh) {
    List<CompletableFuture<?>> sends = new ArrayList<>();
    for (Event e : fresh) {
      Command c = route(e);
      if (c != null) {
        sends.add(commands.apply(c));
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

  /** The command {@code e} causes, or null. */
  Command route(Event e) {
    if (e.eventType() == EventType.TASK_READY
        || e.eventType().kind() == EventType.Kind.INFORMATIONAL) {
      return null;
    }
    return switch (e.eventType()) {
      case CHANGE_CREATED, TASK_COMPLETED -> command(e, CommandType.CHANGE_DISPATCH, "dispatch");
      case TASK_FAILED -> command(e, CommandType.CHANGE_SETTLE, "settle");
      case VERIFICATION_STARTED ->
          "work_graph_completed".equals(e.payload().path("reason").asText())
              ? command(e, CommandType.CANDIDATE_CREATE, "candidate")
              : null;
      default -> null;
    };
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
