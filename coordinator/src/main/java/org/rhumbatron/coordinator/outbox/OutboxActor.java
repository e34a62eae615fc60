package org.rhumbatron.coordinator.outbox;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Context;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.rhumbatron.coordinator.actor.Actor;
import org.rhumbatron.coordinator.actor.ActorContext;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.platform.tracing.TraceAttributes;
import org.rhumbatron.platform.tracing.TraceContext;
import org.rhumbatron.platform.tracing.Tracing;
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

  // The backstop alarm set until `until`, while this node held the actor's duty at `epoch` (null:
  // it did not). Read on the lane, written after a commit, which may be after the lane moved on.
  private record Armed(Instant until, Long epoch) {}

  private volatile Armed armed;

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
    Context caller = Context.current(); // the lane runs the work on another thread
    return onLaneQueued(
        () -> {
          OutboxTx<T> otx = new OutboxTx<>(work, caller);
          return database()
              .inTransactionAsync(otx::run)
              .thenApply(otx::committed)
              .whenComplete(otx::ended);
        });
  }

  /**
   * {@link #transactWithEvents} for code that already runs on this actor's lane (an alarm): the
   * transaction runs and commits now, on this thread.
   */
  protected final <T> T transactWithEventsOnLane(EventWork<T> work) {
    OutboxTx<T> otx = new OutboxTx<>(work, Context.current());
    try {
      T result = otx.committed(database().inTransaction(otx::run));
      otx.ended(result, null);
      return result;
    } catch (RuntimeException | Error e) {
      otx.ended(null, e);
      throw e;
    }
  }

  /**
   * One state change with its outbox rows, and what follows its commit. Its "commit" span is the
   * trace context each row keeps for its publish.
   */
  private final class OutboxTx<T> {
    private final EventWork<T> work;
    private final Span span;
    private final TraceContext trace;
    private final List<Event> appendedEvents = new ArrayList<>();
    private final Instant backstop =
        clock().instant().plus(context().settings().get(Settings.OUTBOX_ALARM_BACKSTOP));
    // Read on the lane before the work is queued: the alarm is armed in the same transaction when
    // the last backstop has passed. Only the holder of the actor's duty fires (and clears) its
    // alarm, so the cache holds while this node keeps that duty at the epoch it armed under;
    // otherwise another core may have fired it since, and each transaction sets it if later.
    private final Optional<Long> epoch = context().alarmEpoch().get();
    private final Armed armedNow = armed;
    private final boolean arm =
        armedNow == null
            || !armedNow.until().isAfter(clock().instant())
            || epoch.isEmpty()
            || !epoch.get().equals(armedNow.epoch());
    private boolean appended;

    OutboxTx(EventWork<T> work, Context caller) {
      this.work = work;
      this.span =
          Tracing.start(
              "commit",
              SpanKind.INTERNAL,
              caller,
              Attributes.of(
                  TraceAttributes.ACTOR, writerId(), TraceAttributes.PROJECT_ID, projectId()));
      this.trace = TraceContext.of(span);
    }

    T run(Tx tx) throws SQLException {
      serialize(tx);
      appended = false; // a group commit may run the work again
      appendedEvents.clear();
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
                  boolean fresh = outbox.append(tx, address(), event, trace);
                  if (fresh) {
                    appendedEvents.add(event.event());
                  }
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
          armed = new Armed(backstop, epoch.orElse(null));
        }
        publisher.kick(streamIndex());
      }
      return result;
    }

    /** Ends the span, with the ids of the Events the commit wrote. */
    void ended(T result, Throwable error) {
      if (!appendedEvents.isEmpty()) {
        span.setAttribute(
            TraceAttributes.EVENT_IDS, appendedEvents.stream().map(Event::eventId).toList());
        appendedEvents.stream()
            .map(Event::changeId)
            .filter(Objects::nonNull)
            .findFirst()
            .ifPresent(id -> span.setAttribute(TraceAttributes.CHANGE_ID, id));
      }
      if (error != null) {
        span.setStatus(StatusCode.ERROR, String.valueOf(error.getMessage()));
      }
      span.end();
    }
  }

  /** The alarm: publish what is due (the kick's backstop). */
  @Override
  protected void onAlarm() {
    armed = null;
    publisher.publishDueOnLane(streamIndex()).join();
  }

  @Override
  protected Optional<Instant> nextDueWork(Tx tx) throws SQLException {
    return publisher.nextDue(tx, address(), streamIndex());
  }
}
