package org.rhumbatron.coordinator.actor;

import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.rhumbatron.platform.concurrent.Futures;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.platform.db.TxWork;

/**
 * An actor: an address, a serial lane (its transactions run one after another, in order), its rows
 * in the database, and one persisted alarm. Subclasses keep no state that the database does not
 * also hold, so the runtime can unload an idle actor and load it again on demand, and another core
 * on the same database can run the actor's next transaction.
 *
 * <p>The lane orders the actor's transactions inside this process; each transaction also starts
 * with the actor's lock ({@link #serialize}), which orders them across the cores that share a
 * PostgreSQL database.
 */
public abstract class Actor {
  private final ActorContext context;
  private final long lockKey;

  protected Actor(ActorContext context) {
    this.context = context;
    this.lockKey = context.address().lockKey();
  }

  public final ActorAddress address() {
    return context.address();
  }

  protected final ActorContext context() {
    return context;
  }

  protected final Clock clock() {
    return context.clock();
  }

  protected final Database database() {
    return context.database();
  }

  /**
   * Runs {@code work} in one transaction on this actor's lane, after its earlier calls. The lane
   * holds no thread while the transaction waits for its commit ({@link
   * Database#inTransactionAsync}); the future completes after the commit.
   */
  protected final <T> CompletableFuture<T> transact(TxWork<T> work) {
    return onLaneQueued(
        () ->
            database()
                .inTransactionAsync(
                    tx -> {
                      serialize(tx);
                      return work.run(tx);
                    }));
  }

  /**
   * Takes this actor's lock for the rest of {@code tx} ({@link Tx#lockUntilEnd}): a transaction of
   * this actor on another core that shares the database runs before or after it, never beside it.
   * Call it first in every transaction that reads or writes the actor's rows.
   */
  protected final void serialize(Tx tx) throws SQLException {
    tx.lockUntilEnd(lockKey);
  }

  /**
   * Runs {@code start} on this actor's lane and holds the lane until the stage it returns
   * completes; the result completes with that stage. {@code start} and what it chains to its stage
   * must not block: they run on the thread that completes the previous stage (a database's group
   * commit).
   */
  protected final <T> CompletableFuture<T> onLaneAsync(Supplier<CompletionStage<T>> start) {
    CompletableFuture<T> result = new CompletableFuture<>();
    context
        .lane()
        .executeAsync(
            () -> {
              CompletionStage<T> stage;
              try {
                stage = start.get();
              } catch (RuntimeException | Error e) {
                result.completeExceptionally(e);
                return result;
              }
              return Futures.relay(stage, result);
            });
    return result;
  }

  /**
   * {@link #onLaneAsync} for a {@code start} that queues one transaction ({@link
   * Database#inTransactionAsync}) and chains only non-blocking steps to it. Where the database
   * commits queued work in the order it was queued ({@link Database#commitsInQueueOrder}), the lane
   * moves on once the work is queued: the actor's next transaction joins the same group commit, or
   * the next, and still runs after this one and sees its writes, so a busy actor's transactions no
   * longer wait a commit each. Elsewhere the lane waits for the stage, as {@code onLaneAsync}.
   */
  protected final <T> CompletableFuture<T> onLaneQueued(Supplier<CompletionStage<T>> start) {
    return database().commitsInQueueOrder() ? onLaneRelaying(start) : onLaneAsync(start);
  }

  /** Runs {@code body} on this actor's lane (no transaction of its own). */
  protected final <T> CompletableFuture<T> onLane(Supplier<T> body) {
    return onLaneRelaying(() -> CompletableFuture.completedFuture(body.get()));
  }

  /** Runs {@code start} on the lane and relays its stage, without holding the lane for it. */
  private <T> CompletableFuture<T> onLaneRelaying(Supplier<CompletionStage<T>> start) {
    CompletableFuture<T> result = new CompletableFuture<>();
    context
        .lane()
        .execute(
            () -> {
              try {
                Futures.relay(start.get(), result);
              } catch (CompletionException e) {
                result.completeExceptionally(Futures.unwrap(e));
              } catch (RuntimeException | Error e) {
                result.completeExceptionally(e);
              }
            });
    return result;
  }

  /**
   * The alarm fired (AlarmGuard allowed it). Runs on the lane. The default does nothing; after it
   * returns the runtime asks {@link #nextDueWork} and re-arms or deletes the alarm.
   */
  protected void onAlarm() {}

  /** When this actor next has work for its alarm, or empty when it has none. Runs on the lane. */
  protected Optional<Instant> nextDueWork(Tx tx) throws SQLException {
    return Optional.empty();
  }
}
