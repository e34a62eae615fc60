package org.rhumbatron.router.claims;

import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.rhumbatron.platform.cluster.Duty;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.cluster.FencedException;
import org.rhumbatron.platform.cluster.OwnsEverything;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Placeholders;
import org.rhumbatron.platform.db.Tx;
import org.rhumbatron.protocol.Event;

/**
 * The seed's {@code claimEvents}: {@code INSERT OR IGNORE processed_events (consumer, event_id)}. A
 * claim is written in the same transaction as the effect it guards, so a redelivered event finds
 * its claim and applies nothing; {@link #release} gives an unapplied event back before a nack.
 */
public final class EventClaims {
  private static final String CLAIM =
      "INSERT INTO processed_events (consumer, event_id, processed_at_ms) VALUES (?, ?, ?)"
          + " ON CONFLICT DO NOTHING";

  private static final int LOOKUP_CHUNK = 100;

  private final Clock clock;
  private final DutyOwnership ownership;

  public EventClaims(Clock clock) {
    this(clock, OwnsEverything.single());
  }

  /** With several cores: every claim passes the fence of its stream's duty. */
  public EventClaims(Clock clock, DutyOwnership ownership) {
    this.clock = clock;
    this.ownership = ownership;
  }

  /**
   * The fence of stream {@code streamIndex}'s duty, in the caller's transaction: a router run's
   * effects and claims commit only while this node holds the stream. Returns the epoch this node
   * holds it at (0 on one node).
   *
   * @throws FencedException when another node holds the stream now
   */
  public long fence(Tx tx, int streamIndex) throws SQLException {
    return ownership.fence(tx, Duty.stream(streamIndex));
  }

  /**
   * {@link #fence} that also requires the epoch {@code epoch} that the caller's work began under: a
   * node that lost the stream and took it again since holds it at a later epoch.
   *
   * @throws FencedException when this node does not hold the stream at {@code epoch} now
   */
  public long fence(Tx tx, int streamIndex, long epoch) throws SQLException {
    long now = fence(tx, streamIndex);
    if (now != epoch) {
      throw new FencedException(
          Duty.stream(streamIndex), ownership.nodeId(), epoch, now, ownership.nodeId());
    }
    return now;
  }

  /**
   * Claims each id for {@code consumer} on stream {@code streamIndex} (after its {@link #fence});
   * returns the fresh ones, in the order given.
   */
  public List<String> claimEvents(
      Tx tx, int streamIndex, String consumer, Collection<String> eventIds) throws SQLException {
    fence(tx, streamIndex);
    long now = clock.millis();
    List<String> ids = List.copyOf(eventIds);
    List<Object[]> rows = new ArrayList<>(ids.size());
    for (String id : ids) {
      rows.add(new Object[] {consumer, id, now});
    }
    int[] inserted = tx.updateBatch(CLAIM, rows);
    List<String> fresh = new ArrayList<>();
    for (int i = 0; i < ids.size(); i++) {
      if (inserted[i] == 1) {
        fresh.add(ids.get(i));
      }
    }
    return fresh;
  }

  /**
   * {@link #claimEvents} of {@code events}' ids, read from stream {@code streamIndex}; returns the
   * fresh events, in the order given. The fence is the stream's that was read, not one derived from
   * an event's project: an event put on another project's stream must not fence a stream this node
   * does not run.
   */
  public List<Event> claimFresh(Tx tx, int streamIndex, String consumer, List<Event> events)
      throws SQLException {
    if (events.isEmpty()) {
      return List.of();
    }
    Set<String> fresh =
        Set.copyOf(
            claimEvents(tx, streamIndex, consumer, events.stream().map(Event::eventId).toList()));
    return events.stream().filter(e -> fresh.contains(e.eventId())).toList();
  }

  /**
   * The ids among {@code eventIds} that {@code consumer} already claimed, read outside any write
   * transaction (the projector skips duplicate-only projects without spending a call on them).
   */
  public Set<String> claimedAmong(Database database, String consumer, List<String> eventIds) {
    return database.read(tx -> claimedAmong(tx, consumer, eventIds));
  }

  /**
   * {@link #claimedAmong(Database, String, List)} inside {@code tx}: one query per {@value
   * #LOOKUP_CHUNK} ids.
   */
  public Set<String> claimedAmong(Tx tx, String consumer, List<String> eventIds)
      throws SQLException {
    Set<String> claimed = new HashSet<>();
    for (int from = 0; from < eventIds.size(); from += LOOKUP_CHUNK) {
      List<String> chunk = eventIds.subList(from, Math.min(eventIds.size(), from + LOOKUP_CHUNK));
      Object[] args = new Object[2 * chunk.size()];
      for (int i = 0; i < chunk.size(); i++) {
        args[2 * i] = consumer;
        args[2 * i + 1] = chunk.get(i);
      }
      claimed.addAll(
          tx.queryPlannedNow(claimedAmongSql(chunk.size()), rs -> rs.getString(1), args));
    }
    return claimed;
  }

  /**
   * The lookup of {@link #claimedAmong} for {@code ids} event ids (one consumer), one full key per
   * id. Not {@code consumer = ? AND event_id IN (...)}: on a table without statistics PostgreSQL
   * plans that as a scan of all the consumer's claims with event_id as a filter.
   */
  static String claimedAmongSql(int ids) {
    return "SELECT event_id FROM processed_events WHERE "
        + Placeholders.repeat("(consumer = ? AND event_id = ?)", " OR ", ids);
  }

  /** Releases claims of events that were not applied, so their next delivery applies them. */
  public int release(Tx tx, String consumer, Collection<String> eventIds) throws SQLException {
    List<Object[]> rows = new ArrayList<>(eventIds.size());
    for (String id : eventIds) {
      rows.add(new Object[] {consumer, id});
    }
    int released = 0;
    for (int n :
        tx.updateBatch("DELETE FROM processed_events WHERE consumer = ? AND event_id = ?", rows)) {
      released += n;
    }
    return released;
  }
}
