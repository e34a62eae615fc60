package org.rhumbatron.coordinator.outbox;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.rhumbatron.coordinator.actor.SerialExecutor;
import org.rhumbatron.platform.eventlog.EventLogException;

/**
 * One stream's lane in the {@link OutboxPublisher}: its runs go one at a time, and it keeps what
 * the runs know of the stream (the last msg id, the rows being recorded, the hold for a tail
 * check).
 */
final class PublishLane {
  final SerialExecutor serial;
  final AtomicBoolean scheduled = new AtomicBoolean();
  // The msg id of the stream's last message as this lane knows it; the next send expects it.
  // Touched only on the lane. Cleared when unsure (start, a refused send, a lost tail).
  String lastMsgId;
  volatile boolean synced;
  // True until a send after the last resync succeeded. The server knows its last msg id only
  // while that message is inside the duplicate window; if it refuses what we read back, the
  // next run sends its first message without the expectation.
  boolean justSynced;
  // Rows acknowledged whose 'published' is not committed yet: the next run skips them. Added on
  // the lane, removed by the commit of their outcome (the writer's thread).
  final Set<Long> recording = ConcurrentHashMap.newKeySet();
  final AtomicBoolean kickAfterRecord = new AtomicBoolean();
  // The commits of acknowledged rows not in yet (see recording): what settle() waits for.
  final Set<CompletableFuture<Void>> records = ConcurrentHashMap.newKeySet();
  // While a run that sent every row it read is being recorded, the rows up to its last seq are
  // all in flight: the next read starts after them. 0 when no such run is in flight.
  volatile long floor;
  // Set from a change of the stream's duty until a tail check since then: another node held the
  // stream, and a tail the server lost meanwhile must be repaired before this lane sends.
  private boolean tailUnchecked;
  private long dutyChanges;

  PublishLane(Executor pool, boolean tailUnchecked) {
    this.serial = new SerialExecutor(pool);
    this.tailUnchecked = tailUnchecked;
  }

  synchronized void holdForTailCheck() {
    tailUnchecked = true;
    dutyChanges++;
  }

  synchronized long dutyChanges() {
    return dutyChanges;
  }

  /** Lets the lane send again unless the duty changed hands since the check began. */
  synchronized void tailChecked(long asOf) {
    if (dutyChanges == asOf) {
      tailUnchecked = false;
    }
  }

  synchronized boolean tailUnchecked() {
    return tailUnchecked;
  }

  /** See {@link OutboxPublisher#checkTail}. */
  <T> T checkTail(String streamName, Duration wait, Supplier<T> check) {
    CompletableFuture<T> result = new CompletableFuture<>();
    serial.execute(
        () -> {
          try {
            CompletableFuture.allOf(records.toArray(CompletableFuture[]::new))
                .exceptionally(e -> null) // a failed record leaves its rows pending: settled too
                .get(wait.toMillis(), TimeUnit.MILLISECONDS);
            long asOf = dutyChanges();
            T checked = check.get();
            synced = false;
            tailChecked(asOf);
            result.complete(checked);
          } catch (TimeoutException e) {
            result.completeExceptionally(
                new EventLogException(
                    "published rows of " + streamName + " not recorded within " + wait, e));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            result.completeExceptionally(e);
          } catch (ExecutionException | RuntimeException e) {
            result.completeExceptionally(e);
          }
        });
    try {
      return result.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException cause) {
        throw cause;
      }
      throw e;
    }
  }
}
