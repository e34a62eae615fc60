package org.rhumbatron.router.deadletter;

import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.rhumbatron.lifecycle.MaintenanceDue;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Placeholders;
import org.rhumbatron.platform.db.Tx;
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

  private static final Duration SEND_TIMEOUT = Duration.ofSeconds(10);
  private static final String SELECT = "SELECT " + DeadLetter.COLUMNS + " FROM dead_letters";
  // Open dead letters read at a time while looking for those of ended Changes.
  static final int ENDED_PAGE = 500;
  private static final String OPEN = DeadLetterStatus.OPEN.dbName();
  private static final String CLOSE =
      "UPDATE dead_letters SET status = '"
          + DeadLetterStatus.CLOSED.dbName()
          + "', resolution = ?, resolved_by = ?, resolved_at_ms = ?";

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
                SELECT + " WHERE status = ? ORDER BY created_at_ms, id LIMIT " + positive(limit),
                DeadLetter::map,
                OPEN));
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
                    CLOSE + " WHERE id = ? AND status = ?",
                    DISMISSED,
                    operator,
                    clock.millis(),
                    id,
                    OPEN));
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
                        "SELECT 1 FROM dead_letters WHERE command_id = ? AND status = ?",
                        rs -> Boolean.TRUE,
                        commandId,
                        OPEN))
            .isPresent();
    if (!open) {
      return false;
    }
    return database.inTransaction(
            tx ->
                tx.update(
                    CLOSE + " WHERE command_id = ? AND status = ?",
                    SUCCEEDED,
                    by,
                    clock.millis(),
                    commandId,
                    OPEN))
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
                CLOSE + " WHERE change_id = ? AND status = ?",
                SUPERSEDED,
                "change.settle",
                clock.millis(),
                changeId,
                OPEN));
  }

  /**
   * For the 5-minute maintenance sweep: closes at most {@code limit} open dead letters of Changes
   * that ended (completed, failed, cancelled, not_selected, declined) as {@code change_ended}.
   * Returns how many closed.
   */
  public int closeForEndedChanges(int limit) {
    positive(limit);
    return database.inTransaction(
        tx -> {
          List<Object> ids = openOfEndedChanges(tx, limit);
          if (ids.isEmpty()) {
            return 0;
          }
          List<Object> args = new ArrayList<>(List.of(CHANGE_ENDED, "maintenance", clock.millis()));
          args.addAll(ids);
          args.add(OPEN);
          return tx.update(
              CLOSE + " WHERE id IN (" + Placeholders.of(ids) + ") AND status = ?", args.toArray());
        });
  }

  /**
   * The ids of at most {@code limit} open dead letters of ended Changes, lowest first: open ones
   * are read a page at a time and their Changes' states asked of the lifecycle.
   */
  private static List<Object> openOfEndedChanges(Tx tx, int limit) throws SQLException {
    record Open(long id, String changeId) {}
    List<Object> due = new ArrayList<>();
    long after = Long.MIN_VALUE;
    while (due.size() < limit) {
      List<Open> page =
          tx.query(
              "SELECT id, change_id FROM dead_letters WHERE status = ? AND change_id IS NOT NULL"
                  + " AND id > ? ORDER BY id LIMIT "
                  + ENDED_PAGE,
              rs -> new Open(rs.getLong(1), rs.getString(2)),
              OPEN,
              after);
      Set<String> ended =
          MaintenanceDue.endedAmong(tx, new HashSet<>(page.stream().map(Open::changeId).toList()));
      for (Open o : page) {
        if (ended.contains(o.changeId()) && due.size() < limit) {
          due.add(o.id());
        }
      }
      if (page.size() < ENDED_PAGE) {
        break;
      }
      after = page.get(page.size() - 1).id();
    }
    return due;
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
