package org.rhumbatron.lifecycle.candidates;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.SQLException;
import java.time.Clock;
import org.rhumbatron.lifecycle.LifecycleException;
import org.rhumbatron.lifecycle.changes.ChangeInfo;
import org.rhumbatron.lifecycle.changes.ChangeLedger;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;

/** The Events of a Change's Candidates and releases, each with its stable id. */
final class CandidateEvents {
  private final Clock clock;

  CandidateEvents(Clock clock) {
    this.clock = clock;
  }

  /** An Event of the Change keyed by {@code key} (a Candidate or release id). */
  Event of(
      ChangeInfo change,
      EventType type,
      String key,
      long generation,
      String writer,
      String causedBy,
      ObjectNode payload) {
    return Event.builder()
        .eventId(StableIds.stableEventId(change.changeId(), type, null, key))
        .eventType(type)
        .tenantId(change.tenantId())
        .projectId(change.projectId())
        .changeId(change.changeId())
        .actor(writer)
        .canonicalGeneration(generation)
        .causedBy(causedBy)
        .correlationId(change.changeId())
        .timestamp(clock.instant())
        .payload(payload)
        .build();
  }

  static ChangeInfo changeOf(Tx tx, String changeId) throws SQLException {
    return ChangeLedger.change(tx, changeId)
        .orElseThrow(() -> LifecycleException.unknownChange(changeId));
  }
}
