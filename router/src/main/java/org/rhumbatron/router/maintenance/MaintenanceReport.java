package org.rhumbatron.router.maintenance;

import java.util.List;
import java.util.Optional;
import org.rhumbatron.platform.db.BatchedPurge;
import org.rhumbatron.protocol.Command;

/**
 * What one housekeeping tick did: the Commands it sent (in order), the ones whose send failed (they
 * are queued again by a later tick), the purge of each table with a horizon, and the dead letters
 * it closed.
 */
public record MaintenanceReport(
    List<Command> sent,
    List<Command> failedSends,
    List<BatchedPurge.Result> purges,
    int deadLettersClosed) {

  public MaintenanceReport {
    sent = List.copyOf(sent);
    failedSends = List.copyOf(failedSends);
    purges = List.copyOf(purges);
  }

  /** The sent commands' types on the wire, e.g. {@code [forks.sweep, index.build]}. */
  public List<String> sentTypes() {
    return sent.stream().map(c -> c.commandType().wireName()).toList();
  }

  /** The purge of {@code table} in this tick; absent when it failed (logged). */
  public Optional<BatchedPurge.Result> purge(String table) {
    return purges.stream().filter(p -> p.table().equals(table)).findFirst();
  }
}
