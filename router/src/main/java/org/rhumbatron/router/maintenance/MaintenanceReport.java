package org.rhumbatron.router.maintenance;

import java.util.List;
import org.rhumbatron.protocol.Command;

/**
 * What one housekeeping tick did: the Commands it sent (in order), the ones whose send failed (they
 * are queued again by a later tick), and the rows it deleted or closed.
 */
public record MaintenanceReport(
    List<Command> sent,
    List<Command> failedSends,
    int processedEventsDeleted,
    int deadLettersClosed) {

  public MaintenanceReport {
    sent = List.copyOf(sent);
    failedSends = List.copyOf(failedSends);
  }

  /** The sent commands' types on the wire, e.g. {@code [forks.sweep, index.build]}. */
  public List<String> sentTypes() {
    return sent.stream().map(c -> c.commandType().wireName()).toList();
  }
}
