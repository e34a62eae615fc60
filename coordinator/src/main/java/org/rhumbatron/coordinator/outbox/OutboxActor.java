package org.rhumbatron.coordinator.outbox;

import java.sql.SQLException;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.rhumbatron.coordinator.actor.Actor;
import org.rhumbatron.coordinator.actor.ActorContext;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventStreams;

/**
 * An actor that owns an outbox (ProjectRoot and ResourceShard): it writes its state change and its
 * Events in one transaction, then kicks the publisher in process. Its persisted alarm is the
 * backstop that publishes what the kick did not (a crash, a retry_wait row).
 */
public abstract class OutboxActor extends Actor {
  private final Outbox outbox;
  private final OutboxPublisher publisher;
  // Only touched on the lane: the backstop alarm set until armedUntil, while this node held the
  // actor's duty at armedEpoch (null: it did not).
  private Instant armedUntil;
  private Long armedEpoch;

  /** The body of a state change: writes its rows with {@code tx} and its Events to {@code out}. */
  @FunctionalInterface
  public interface EventWork<T> {
    T run(Tx tx, Appender out) throws SQLException;
  }

  /** Appends Events to this actor's outbox in the running transaction. */
  public interface Appender {
    /** Returns false when the event id was there already (the repeat is ignored). */
    boolean append(Event event) throws SQLException;

    /** The same for an Event encoded before the transaction ({@link #encode}). */
    boolean append(Outbox.Encoded event) throws SQLException;
  }

  /** Encodes an Event outside the transaction, so the writer does less while it holds the lock. */
  public final Outbox.Encoded encode(Event event) {
    return outbox.encode(event);
  }

  protected OutboxActor(ActorContext context, Outbox outbox, OutboxPublisher publisher) {
    super(context);
    this.outbox = outbox;
    this.publisher = publisher;
  }

  /** The project this actor belongs to; its Events go to that project's stream. */
  public abstract String projectId();

  /** The stream of this actor's project: {@code fnv1a32(projectId) mod 8}. */
  public final int streamIndex() {
    return EventStreams.streamIndex(projectId());
  }

  /** Identifies this actor in the Events it writes ({@code actor} field). */
  public String writerId() {
    return address().actorClass() + ":" + address().actorId();
  }

  /**
   * Runs {@code work} in one transaction on this actor's lane: state change and outbox rows commit
   * together or not at all. After the commit the publisher is kicked. The lane holds no thread
   * while the transaction waits for its group commit ({@link Database#inTransactionAsync}).
   */
  protected final <T> CompletableFuture<T> transactWithEvents(EventWork<T> work) {
    return onLaneAsync(
        () -> {
          OutboxTx<T> otx = new OutboxTx<>(work);
          return database().inTransactionAsync(otx::run).thenApply(otx::committed);
        });
  }

  /**
   * {@link #transactWithEvents} for code that already runs on this actor's lane (an alarm): the
   * transaction runs and commits now, on this thread.
   */
  protected final <T> T transactWithEventsOnLane(EventWork<T> work) {
    OutboxTx<T> otx = new OutboxTx<>(work);
    return otx.committed(database().inTransaction(otx::run));
  }

  /** One state change with its outbox rows, and what follows its commit. */
  private final class OutboxTx<T> {
    private final EventWork<T> work;
    private final Instant backstop =
        clock().instant().plus(context().settings().get(Settings.OUTBOX_ALARM_BACKSTOP));
    // Read on the lane before the work is queued: the alarm is armed in the same transaction when
    // the last backstop has passed. Only the holder of the actor's duty fires (and clears) its
    // alarm, so the cache holds while this node keeps that duty at the epoch it armed under;
    // otherwise another core may have fired it since, and each transaction sets it if later.
    private final Optional<Long> epoch = context().alarmEpoch().get();
    private final boolean arm =
        armedUntil == null
            || !armedUntil.isAfter(clock().instant())
            || epoch.isEmpty()
            || !epoch.get().equals(armedEpoch);
    private boolean appended;

    OutboxTx(EventWork<T> work) {
      this.work = work;
    }

    T run(Tx tx) throws SQLException {
      serialize(tx);
      appended = false; // a group commit may run the work again
      T r =
          work.run(
              tx,
              new Appender() {
                @Override
                public boolean append(Event event) throws SQLException {
                  return append(outbox.encode(event));
                }

                @Override
                public boolean append(Outbox.Encoded event) throws SQLException {
                  boolean fresh = outbox.append(tx, address(), event);
                  appended |= fresh;
                  return fresh;
                }
              });
      if (appended && arm) {
        context().alarms().setIfEarlier(tx, address(), backstop);
      }
      return r;
    }

    T committed(T result) {
      // Still on the lane: it waits for this stage before its next task.
      if (appended) {
        if (arm) {
          armedUntil = backstop;
          armedEpoch = epoch.orElse(null);
        }
        publisher.kick(streamIndex());
      }
      return result;
    }
  }

  /** The alarm: publish what is due (the kick's backstop). */
  @Override
  protected void onAlarm() {
    armedUntil = null;
    armedEpoch = null;
    publisher.publishDueOnLane(streamIndex()).join();
  }

  @Override
  protected Optional<Instant> nextDueWork(Tx tx) throws SQLException {
    return publisher.nextDue(tx, address(), streamIndex());
  }
}
