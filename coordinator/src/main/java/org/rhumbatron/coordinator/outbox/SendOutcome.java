package org.rhumbatron.coordinator.outbox;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.rhumbatron.coordinator.actor.ActorAddress;
import org.rhumbatron.platform.eventlog.ConnectionLostException;
import org.rhumbatron.platform.eventlog.EventLogTransport;
import org.rhumbatron.platform.eventlog.PredecessorMissingException;

/** The PubAcks of one run's sends: each row's stream sequence, or its actor's first failure. */
final class SendOutcome {
  /** The first failed send of an actor in a run; later rows of that actor stay pending. */
  record Failure(int index, String error, boolean counted) {}

  final List<Long> ackedSeqs = new ArrayList<>();
  final Map<ActorAddress, Failure> failures = new LinkedHashMap<>();
  // When the PubAcks were in: the rows' published_at_ms, whenever their record commits.
  long ackedAtMs;
  private boolean firstWasRefused;

  /** Waits for {@code acks} (one per row of {@code sent}) up to {@code timeout} in all. */
  static SendOutcome collect(
      List<WaitingRow> sent,
      List<CompletableFuture<Long>> acks,
      Duration timeout,
      EventLogTransport transport,
      Clock clock) {
    SendOutcome outcome = new SendOutcome();
    long deadline = System.nanoTime() + timeout.toNanos();
    for (int i = 0; i < acks.size(); i++) {
      Long seq = null;
      String error = null;
      boolean refused = false;
      try {
        seq = acks.get(i).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (ExecutionException | TimeoutException e) {
        Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
        refused = cause instanceof PredecessorMissingException;
        if (i == 0) {
          outcome.firstWasRefused = refused;
        }
        // A drop fails the PubAck while disconnected; by now the connection may be back.
        refused |= cause instanceof ConnectionLostException;
        error = cause.getClass().getSimpleName() + ": " + cause.getMessage();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        error = "interrupted";
      }
      outcome.ackedSeqs.add(seq);
      if (error != null) {
        // A send that failed because the connection dropped, or because its predecessor is
        // missing on the stream, is not the row's fault.
        boolean counted = transport.isConnected() && !"interrupted".equals(error) && !refused;
        outcome.failures.putIfAbsent(sent.get(i).actor(), new Failure(i, error, counted));
      }
    }
    outcome.ackedAtMs = clock.millis();
    return outcome;
  }

  /** Whether the server refused the run's first send for a missing predecessor. */
  boolean firstRefused() {
    return firstWasRefused;
  }

  boolean anyAcked() {
    return ackedSeqs.stream().anyMatch(s -> s != null);
  }

  boolean anyCounted() {
    return failures.values().stream().anyMatch(Failure::counted);
  }

  int publishedCount() {
    return (int) ackedSeqs.stream().filter(s -> s != null).count();
  }

  int countedCount() {
    return (int) failures.values().stream().filter(Failure::counted).count();
  }
}
