package org.rhumbatron.router.deadletter;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.rhumbatron.coordinator.outbox.OutboxActor.Appender;
import org.rhumbatron.coordinator.shard.ChangeEvents;
import org.rhumbatron.coordinator.shard.ResourceShardActor;
import org.rhumbatron.lifecycle.changes.DeadLetterEffects;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.StoredText;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.platform.queue.Delivery;
import org.rhumbatron.platform.queue.Outcome;
import org.rhumbatron.platform.queue.QueueFailure;
import org.rhumbatron.platform.queue.QueueHandler;
import org.rhumbatron.platform.queue.QueueListener;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.DeadLetterMessage;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.EnvelopeException;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.protocol.Sha256;
import org.rhumbatron.protocol.StableIds;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event router's consumer of {@code cmd.dead-letter}. Per message, in one transaction of the
 * shard that owns {@code change:<changeId>}: a {@code dead_letters} row (idempotent on {@code
 * command_id}); a ready or assigned Task goes to {@code blocked} ({@code blocked_limit =
 * dead_letter}) with {@code task.failed} in the shard's outbox; a command without a Task, or whose
 * Task is in any other state (e.g. running), puts the reason on the Change instead (both through
 * {@link DeadLetterEffects}: the lifecycle writes its own tables). It never sends a command again:
 * only an operator's Retry does.
 */
public final class DeadLetterConsumer
    implements QueueHandler<DeadLetterMessage>, QueueListener<DeadLetterMessage> {
  private static final Logger log = LoggerFactory.getLogger(DeadLetterConsumer.class);
  private static final Duration SHARD_TIMEOUT = Duration.ofSeconds(30);
  public static final String BLOCKED_LIMIT = "dead_letter";

  private static final String INSERT =
      "INSERT INTO dead_letters (command_id, kind, command_type, origin_queue, command, reason,"
          + " delivery_count, change_id, task_id, project_id, status, attempt, created_at_ms)"
          + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING";
  // A later attempt of the same command (after an operator's Retry) failed again: not a repeat.
  private static final String REOPEN =
      "UPDATE dead_letters SET origin_queue = ?, command = ?, reason = ?, delivery_count = ?,"
          + " attempt = ?, status = ?, resolution = NULL, resolved_by = NULL,"
          + " resolved_at_ms = NULL WHERE command_id = ? AND attempt < ?";

  private final Database database;
  private final ChangeEvents changeEvents;
  private final EnvelopeCodec codec;
  private final Clock clock;

  public DeadLetterConsumer(
      Database database, ChangeEvents changeEvents, EnvelopeCodec codec, Clock clock) {
    this.database = database;
    this.changeEvents = changeEvents;
    this.codec = codec;
    this.clock = clock;
  }

  /** What happened to one dead letter. */
  public enum Recorded {
    /** A repeat delivery: the row was there already, nothing was written. */
    DUPLICATE,
    /** The Task was blocked and task.failed written. */
    TASK_BLOCKED,
    /** The reason went on the Change (no Task, or a Task that was not ready or assigned). */
    CHANGE_REASON,
    /** Only the row: the command names no Change, or its original did not decode. */
    ROW_ONLY
  }

  @Override
  public Outcome handle(DeadLetterMessage message, Delivery delivery) throws Exception {
    Recorded recorded = record(message);
    log.info(
        "dead letter from {} after {} deliveries: {} ({})",
        message.originQueue().wireName(),
        message.deliveryCount(),
        recorded,
        message.error());
    return Outcome.ack();
  }

  /** Records one dead letter; safe to call again with the same message. */
  public Recorded record(DeadLetterMessage message) throws Exception {
    Command command;
    try {
      command = codec.decodeCommand(message.original());
    } catch (EnvelopeException e) {
      String reason =
          message.error() + " (the original is not a valid command: " + e.getMessage() + ")";
      return database.inTransaction(
              tx -> insert(tx, undecodableId(message.original()), null, message, reason, 1))
          ? Recorded.ROW_ONLY
          : Recorded.DUPLICATE;
    }
    if (command.changeId() == null || command.projectId() == null) {
      return database.inTransaction(
              tx ->
                  insert(
                      tx,
                      command.commandId(),
                      command,
                      message,
                      message.error(),
                      command.attempt()))
          ? Recorded.ROW_ONLY
          : Recorded.DUPLICATE;
    }
    ResourceShardActor shard =
        changeEvents.shardFor(command.projectId(), "change:" + command.changeId());
    try {
      return shard
          .change((tx, out) -> recordOnShard(tx, out, shard, command, message))
          .get(SHARD_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Exception cause ? cause : e;
    } catch (TimeoutException e) {
      throw new IllegalStateException(
          "shard " + shard.address() + " did not record dead letter " + command.commandId(), e);
    }
  }

  private Recorded recordOnShard(
      Tx tx, Appender out, ResourceShardActor shard, Command command, DeadLetterMessage message)
      throws SQLException {
    if (!insert(tx, command.commandId(), command, message, message.error(), command.attempt())) {
      return Recorded.DUPLICATE;
    }
    long now = clock.millis();
    String reason =
        "dead letter "
            + command.commandId()
            + " from "
            + message.originQueue().wireName()
            + ": "
            + message.error();
    Optional<String> blockedIn =
        command.taskId() == null
            ? Optional.empty()
            : DeadLetterEffects.blockTask(
                tx,
                command.changeId(),
                command.taskId(),
                BLOCKED_LIMIT,
                StoredText.of(message.error()),
                now);
    if (blockedIn.isPresent()) {
      out.append(taskFailed(shard, command, message, blockedIn.get()));
      return Recorded.TASK_BLOCKED;
    }
    DeadLetterEffects.noteOnChange(tx, command.changeId(), StoredText.of(reason), now);
    return Recorded.CHANGE_REASON;
  }

  /** Inserts the row, or reopens it for a later attempt; false for a repeat delivery. */
  private boolean insert(
      Tx tx,
      String commandId,
      Command command,
      DeadLetterMessage message,
      String reason,
      int attempt)
      throws SQLException {
    int inserted =
        tx.update(
            INSERT,
            commandId,
            DeadLetter.KIND_COMMAND,
            command == null ? null : command.commandType().wireName(),
            message.originQueue().wireName(),
            StoredText.of(message.original()),
            StoredText.of(reason),
            message.deliveryCount(),
            command == null ? null : command.changeId(),
            command == null ? null : command.taskId(),
            command == null ? null : command.projectId(),
            DeadLetterStatus.OPEN.dbName(),
            attempt,
            clock.millis());
    if (inserted == 1) {
      return true;
    }
    return tx.update(
            REOPEN,
            message.originQueue().wireName(),
            StoredText.of(message.original()),
            StoredText.of(reason),
            message.deliveryCount(),
            attempt,
            DeadLetterStatus.OPEN.dbName(),
            commandId,
            attempt)
        == 1;
  }

  private Event taskFailed(
      ResourceShardActor shard, Command command, DeadLetterMessage message, String tenantId) {
    ObjectNode payload = JsonNodeFactory.instance.objectNode();
    payload.put("reason", message.error());
    payload.put("blockedLimit", BLOCKED_LIMIT);
    payload.put("commandId", command.commandId());
    payload.put("commandType", command.commandType().wireName());
    payload.put("attempt", command.attempt());
    payload.put("originQueue", message.originQueue().wireName());
    payload.put("deliveryCount", message.deliveryCount());
    return Event.builder()
        // Stable per command and attempt: a second delivery of this dead letter adds nothing.
        .eventId(
            StableIds.stableEventId(
                command.changeId(),
                EventType.TASK_FAILED,
                command.taskId(),
                "dead_letter:" + command.commandId() + ":a" + command.attempt()))
        .eventType(EventType.TASK_FAILED)
        .tenantId(tenantId)
        .projectId(command.projectId())
        .changeId(command.changeId())
        .taskId(command.taskId())
        .actor(shard.writerId())
        .causedBy(command.commandId())
        .correlationId(command.changeId())
        .timestamp(clock.instant())
        .payload(payload)
        .build();
  }

  /**
   * A message on {@code cmd.dead-letter} that is not a dead-letter message, or one that failed all
   * its deliveries here: the queue has no dead-letter queue, so the row is the operator's only
   * trace. Best effort: if the database is what failed, the runner's log line is the trace.
   */
  @Override
  public void gaveUp(QueueFailure<DeadLetterMessage> failure) {
    String id = undecodableId(failure.original());
    try {
      database.inTransaction(
          tx ->
              tx.update(
                  INSERT,
                  id,
                  DeadLetter.KIND_COMMAND,
                  null,
                  Queue.DEAD_LETTER.wireName(),
                  StoredText.of(failure.original()),
                  StoredText.of(failure.reason()),
                  (int) Math.min(Integer.MAX_VALUE, failure.delivery().deliveredCount()),
                  null,
                  null,
                  null,
                  DeadLetterStatus.OPEN.dbName(),
                  1,
                  clock.millis()));
    } catch (RuntimeException e) {
      log.error("cannot record the failed dead-letter message {}: {}", id, e.toString());
    }
  }

  /**
   * A command id for a row whose original has none: {@code cmd_undecodable_} + the first 16 bytes
   * of SHA-256 of the text, so a repeat finds the same row.
   */
  static String undecodableId(String original) {
    return "cmd_undecodable_" + Sha256.hex(original, 16);
  }
}
