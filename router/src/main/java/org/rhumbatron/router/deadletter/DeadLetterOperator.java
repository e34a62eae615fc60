package org.rhumbatron.router.deadletter;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.queue.CommandSendException;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.platform.queue.Delivery;
import org.rhumbatron.platform.queue.QueueListener;
import org.rhumbatron.platform.queue.SendReceipt;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.protocol.EnvelopeException;

/**
 * The operator's actions on dead letters (workers/api/src/dead-letters.ts), and the ways a dead
 * letter closes: {@code dismissed} by an operator, {@code succeeded} when the same command later
 * succeeds, {@code superseded} when a later change.settle of its Change runs, {@code change_ended}
 * by the 5-minute sweep. Retry sends the command again with attempt + 1 and keeps the row open
 * until that send succeeds (or fails into a dead letter again).
 */
public final class DeadLetterOperator {
  public static final String DISMISSED = "dismissed";
  public static final String SUCCEEDED = "succeeded";
  public static final String SUPERSEDED = "superseded";
  public static final String CHANGE_ENDED = "change_ended";

  /** The Change states in which the sweep closes a Change's dead letters. */
  public static final List<String> ENDED_CHANGE_STATES =
      List.of("completed", "failed", "cancelled", "not_selected", "declined");

  private static final Duration SEND_TIMEOUT = Duration.ofSeconds(10);
  private static final String SELECT = "SELECT " + DeadLetter.COLUMNS + " FROM dead_letters";
  private static final String CLOSE =
      "UPDATE dead_letters SET status = 'closed', resolution = ?, resolved_by = ?,"
          + " resolved_at_ms = ?";

  private final Database database;
  private final Commands commands;
  private final EnvelopeCodec codec;
  private final Clock clock;

  public DeadLetterOperator(
      Database database, Commands commands, EnvelopeCodec codec, Clock clock) {
    this.database = database;
    this.commands = commands;
    this.codec = codec;
    this.clock = clock;
  }

  /** Open dead letters, oldest first, at most {@code limit}. */
  public List<DeadLetter> listOpen(int limit) {
    return database.read(
        tx ->
            tx.query(
                SELECT
                    + " WHERE status = 'open' ORDER BY created_at_ms, id LIMIT "
                    + positive(limit),
                DeadLetter::map));
  }

  public Optional<DeadLetter> find(long id) {
    return database.read(tx -> tx.queryFirst(SELECT + " WHERE id = ?", DeadLetter::map, id));
  }

  public Optional<DeadLetter> findByCommandId(String commandId) {
    return database.read(
        tx -> tx.queryFirst(SELECT + " WHERE command_id = ?", DeadLetter::map, commandId));
  }

  /**
   * Sends the command of an open dead letter again with attempt + 1: agent.wake to agent-wakeups,
   * every other command to integration, with message id {@code <queue>:<commandId>:a<attempt>} (see
   * {@link Commands#retryMessageId}). Records who and when; the row stays open.
   *
   * @throws DeadLetterNotFoundException for an unknown id
   * @throws DeadLetterClosedException for a closed row
   * @throws DeadLetterNotRetryableException for an event batch or an undecodable original
   * @throws CommandSendException when the queue did not store the send
   */
  public SendReceipt retry(long id, String operator) {
    DeadLetter row = find(id).orElseThrow(() -> new DeadLetterNotFoundException(id));
    if (DeadLetter.KIND_EVENT_BATCH.equals(row.kind())) {
      throw new DeadLetterNotRetryableException(
          id, row.commandId(), "an event-batch dead letter can only be dismissed (poison batch)");
    }
    if (!row.open()) {
      throw new DeadLetterClosedException(id, row.commandId(), row.resolution());
    }
    Command command;
    try {
      command = codec.decodeCommand(row.command());
    } catch (EnvelopeException e) {
      throw new DeadLetterNotRetryableException(
          id, row.commandId(), "its original is not a valid command: " + e.getMessage());
    }
    Command retried = command.withAttempt(row.attempt() + 1);
    SendReceipt receipt = await(commands.resend(retried), id);
    database.inTransaction(
        tx ->
            tx.update(
                "UPDATE dead_letters SET retried_by = ?, retried_at_ms = ?, retried_attempt = ?"
                    + " WHERE id = ?",
                operator,
                clock.millis(),
                retried.attempt(),
                id));
    return receipt;
  }

  /**
   * Closes an open dead letter with resolution {@code dismissed}, recording who and when; the only
   * action an event-batch dead letter allows.
   */
  public DeadLetter dismiss(long id, String operator) {
    int closed =
        database.inTransaction(
            tx ->
                tx.update(
                    CLOSE + " WHERE id = ? AND status = 'open'",
                    DISMISSED,
                    operator,
                    clock.millis(),
                    id));
    DeadLetter row = find(id).orElseThrow(() -> new DeadLetterNotFoundException(id));
    if (closed == 0) {
      throw new DeadLetterClosedException(id, row.commandId(), row.resolution());
    }
    return row;
  }

  /**
   * The same command succeeded later: closes its open dead letter as {@code succeeded}. A read
   * first, so the common case (no dead letter) costs no write transaction.
   */
  public boolean closeSucceeded(String commandId, String by) {
    boolean open =
        database
            .read(
                tx ->
                    tx.queryFirst(
                        "SELECT 1 FROM dead_letters WHERE command_id = ? AND status = 'open'",
                        rs -> Boolean.TRUE,
                        commandId))
            .isPresent();
    if (!open) {
      return false;
    }
    return database.inTransaction(
            tx ->
                tx.update(
                    CLOSE + " WHERE command_id = ? AND status = 'open'",
                    SUCCEEDED,
                    by,
                    clock.millis(),
                    commandId))
        == 1;
  }

  /**
   * The success hook for a queue consumer: closes the dead letter of each command that succeeds.
   */
  public QueueListener<Command> successHook() {
    return new QueueListener<>() {
      @Override
      public void succeeded(Command command, Delivery delivery) {
        closeSucceeded(command.commandId(), delivery.queue().durableName());
      }
    };
  }

  /**
   * A later change.settle of the Change runs: its open dead letters close as {@code superseded}.
   */
  public int supersedeForChange(String changeId) {
    return database.inTransaction(
        tx ->
            tx.update(
                CLOSE + " WHERE change_id = ? AND status = 'open'",
                SUPERSEDED,
                "change.settle",
                clock.millis(),
                changeId));
  }

  /**
   * For the 5-minute maintenance sweep: closes at most {@code limit} open dead letters of Changes
   * that ended (completed, failed, cancelled, not_selected, declined) as {@code change_ended}.
   * Returns how many closed.
   */
  public int closeForEndedChanges(int limit) {
    String states =
        String.join(", ", ENDED_CHANGE_STATES.stream().map(s -> "'" + s + "'").toList());
    return database.inTransaction(
        tx ->
            tx.update(
                CLOSE
                    + " WHERE id IN (SELECT d.id FROM dead_letters d JOIN changes c ON c.change_id"
                    + " = d.change_id WHERE d.status = 'open' AND c.state IN ("
                    + states
                    + ") ORDER BY d.id LIMIT "
                    + positive(limit)
                    + ")",
                CHANGE_ENDED,
                "maintenance",
                clock.millis()));
  }

  private static int positive(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, got " + limit);
    }
    return limit;
  }

  private static SendReceipt await(
      java.util.concurrent.CompletableFuture<SendReceipt> send, long id) {
    try {
      return send.get(SEND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new IllegalStateException("retry of dead letter " + id + " failed", e.getCause());
    } catch (TimeoutException e) {
      throw new IllegalStateException(
          "retry of dead letter " + id + ": no answer from the queue in " + SEND_TIMEOUT, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while retrying dead letter " + id, e);
    }
  }
}
