package org.rhumbatron.coordinator.outbox;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.rhumbatron.coordinator.actor.ActorAddress;

/**
 * What one publisher run does with the rows it read, decided without NATS or the database: rows go
 * in outbox order; a row held back (a retry not due yet, its project over the per-run cap) holds
 * back the later rows of its actor, so each actor's Events keep their commit order.
 *
 * @param toSend the rows to send, in order
 * @param dueRetries retry_wait rows whose backoff has passed (to pending, and sent when they can)
 * @param unbound rows of a stream without a producer binding (to failed)
 * @param held the actors with a row held back
 * @param capped whether a project reached the per-run cap (the run goes on after)
 * @param disconnected whether sending stopped because the connection is down or paused
 */
record RunPlan(
    List<WaitingRow> toSend,
    List<WaitingRow> dueRetries,
    List<WaitingRow> unbound,
    Set<ActorAddress> held,
    boolean capped,
    boolean disconnected) {

  /**
   * The plan for {@code rows} at {@code nowMs}: {@code bound} when the stream has a producer
   * binding, {@code connected} when sends may go out, at most {@code perProject} rows per project.
   */
  static RunPlan of(
      List<WaitingRow> rows, long nowMs, boolean bound, boolean connected, int perProject) {
    Set<ActorAddress> held = new HashSet<>();
    Map<String, Integer> perProjectSent = new HashMap<>();
    List<WaitingRow> dueRetries = new ArrayList<>();
    List<WaitingRow> unbound = new ArrayList<>();
    List<WaitingRow> toSend = new ArrayList<>();
    boolean disconnected = false;
    boolean capped = false;
    for (WaitingRow row : rows) {
      if (held.contains(row.actor())) {
        continue; // an earlier row of this actor waits: keep the actor's order
      }
      if (row.state() == OutboxRowState.RETRY_WAIT) {
        if (row.nextAttemptAtMs() > nowMs) {
          held.add(row.actor());
          continue;
        }
        dueRetries.add(row); // retry_wait -> pending: the backoff has passed
      }
      if (!bound) {
        unbound.add(row);
        continue;
      }
      if (!connected) {
        disconnected = true; // nothing is sent and no attempt counted while NATS is down
        break;
      }
      if (perProjectSent.merge(row.projectId(), 1, Integer::sum) > perProject) {
        held.add(row.actor());
        capped = true;
        continue;
      }
      toSend.add(row);
    }
    return new RunPlan(toSend, dueRetries, unbound, held, capped, disconnected);
  }

  /** Whether every row read goes out (nothing held back, retried or unbound). */
  boolean sendsAll(int read) {
    return held.isEmpty() && toSend.size() == read;
  }
}
