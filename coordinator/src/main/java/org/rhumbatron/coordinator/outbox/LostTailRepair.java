package org.rhumbatron.coordinator.outbox;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.rhumbatron.coordinator.actor.ActorAddress;
import org.rhumbatron.platform.cluster.Duty;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.eventlog.EventLogTransport;
import org.rhumbatron.protocol.EventStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * nats-server acknowledges before its fsync, so a crash can lose an acknowledged tail. Published
 * rows keep their PubAck sequence for a horizon; this finds kept rows whose message is gone (the
 * stream ends before it, or another message now has its sequence) and puts them back to pending, so
 * the publisher sends them again with the same {@code Nats-Msg-Id}. A loss is always a tail, so the
 * walk goes from the newest kept row back to the first intact one.
 */
public final class LostTailRepair {
  private static final Logger log = LoggerFactory.getLogger(LostTailRepair.class);

  private final Database database;
  private final EventLogTransport transport;
  private final Clock clock;
  private final Duration horizon;
  private final DutyOwnership ownership;

  /** With several cores a repair writes under the stream's duty, through its fence. */
  public LostTailRepair(
      Database database,
      EventLogTransport transport,
      Clock clock,
      Duration horizon,
      DutyOwnership ownership) {
    this.ownership = ownership;
    this.database = database;
    this.transport = transport;
    this.clock = clock;
    this.horizon = horizon;
  }

  /** The highest stream sequence a kept row of the stream recorded (0 when none). */
  public long highestRecordedSequence(int streamIndex) {
    return database.read(
        tx ->
            tx.queryFirst(
                    "SELECT MAX(stream_seq) FROM outbox WHERE stream_index = ?"
                        + " AND stream_seq IS NOT NULL",
                    rs -> rs.getLong(1),
                    streamIndex)
                .orElse(0L));
  }

  /** The lowest stream sequence that two kept rows share (a lost one and a newer one). */
  private long lowestSharedSequence(int streamIndex, long since) {
    return database.read(
        tx ->
            tx.queryFirst(
                    "SELECT MIN(stream_seq) FROM (SELECT stream_seq FROM outbox"
                        + " WHERE stream_index = ? AND state = ? AND stream_seq IS NOT NULL"
                        + " AND published_at_ms >= ? GROUP BY stream_seq HAVING COUNT(*) > 1) shared",
                    rs -> {
                      long v = rs.getLong(1);
                      return rs.wasNull() ? Long.MAX_VALUE : v;
                    },
                    streamIndex,
                    OutboxRowState.PUBLISHED.dbName(),
                    since)
                .orElse(Long.MAX_VALUE));
  }

  private record Kept(long seq, String eventId, long streamSeq, ActorAddress actor) {}

  /**
   * Checks one stream. Rows published after a loss reuse the lost sequences, so two kept rows can
   * hold the same sequence; at and above the lowest such sequence every row is checked, and only
   * below it does the first intact row end the walk.
   */
  public List<ActorAddress> repair(int streamIndex) {
    long since = clock.millis() - horizon.toMillis();
    long last = transport.lastSequence(streamIndex);
    long contestedFrom = lowestSharedSequence(streamIndex, since);
    List<Kept> lost = new ArrayList<>();
    int pageSize = 200;
    long[] after = {Long.MAX_VALUE, Long.MAX_VALUE}; // (stream_seq, seq) of the last row seen
    walk:
    while (true) {
      List<Kept> page =
          database.read(
              tx ->
                  tx.query(
                      "SELECT seq, event_id, stream_seq, actor_class, actor_id FROM outbox"
                          + " WHERE stream_index = ? AND state = ? AND stream_seq IS NOT NULL"
                          + " AND published_at_ms >= ?"
                          + " AND (stream_seq < ? OR (stream_seq = ? AND seq < ?))"
                          + " ORDER BY stream_seq DESC, seq DESC LIMIT "
                          + pageSize,
                      rs ->
                          new Kept(
                              rs.getLong(1),
                              rs.getString(2),
                              rs.getLong(3),
                              new ActorAddress(rs.getString(4), rs.getString(5))),
                      streamIndex,
                      OutboxRowState.PUBLISHED.dbName(),
                      since,
                      after[0],
                      after[0],
                      after[1]));
      for (Kept k : page) {
        boolean intact =
            k.streamSeq() <= last
                && transport
                    .messageIdAt(streamIndex, k.streamSeq())
                    .map(k.eventId()::equals)
                    .orElse(false);
        if (!intact) {
          lost.add(k);
        } else if (k.streamSeq() < contestedFrom) {
          break walk; // a loss is a tail: intact from here back
        }
      }
      if (page.size() < pageSize) {
        break;
      }
      Kept tail = page.get(page.size() - 1);
      after[0] = tail.streamSeq();
      after[1] = tail.seq();
    }
    if (lost.isEmpty()) {
      return List.of();
    }
    database.inTransaction(
        tx -> {
          ownership.fence(tx, Duty.stream(streamIndex));
          for (Kept k : lost) {
            tx.update(
                "UPDATE outbox SET state = ?, stream_seq = NULL, published_at_ms = NULL,"
                    + " attempts = 0, next_attempt_at_ms = ?, last_error = ? WHERE seq = ?",
                OutboxRowState.PENDING.dbName(),
                clock.millis(),
                "lost from "
                    + EventStreams.streamName(streamIndex)
                    + " at sequence "
                    + k.streamSeq(),
                k.seq());
          }
          return null;
        });
    log.warn(
        "{} lost its tail: {} published events (sequences {}..{}) go out again",
        EventStreams.streamName(streamIndex),
        lost.size(),
        lost.get(lost.size() - 1).streamSeq(),
        lost.get(0).streamSeq());
    return lost.stream().map(Kept::actor).distinct().toList();
  }
}
