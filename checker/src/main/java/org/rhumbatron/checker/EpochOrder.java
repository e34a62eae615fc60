package org.rhumbatron.checker;

import java.util.HashMap;
import java.util.Map;
import org.rhumbatron.coordinator.outbox.OutboxRowState;
import org.rhumbatron.platform.db.Database;

/**
 * No outbox row was recorded published under an epoch older than one its stream's duty had already
 * used: along each stream, in the order the server stored the Events, the epochs the publishers
 * wrote never go down. A row behind a lower epoch was marked by an owner that had lost the duty,
 * which the fence must refuse.
 */
final class EpochOrder {
  static final String EPOCH_WENT_BACK = "published_under_an_older_epoch";

  private EpochOrder() {}

  static void check(Database db, CheckReport report) {
    report.expect(EPOCH_WENT_BACK);
    Map<Integer, Long> highest = new HashMap<>();
    Map<Integer, Long> at = new HashMap<>();
    long[] rows = {0};
    db.read(
        tx ->
            tx.query(
                "SELECT stream_index, stream_seq, epoch, event_id FROM outbox"
                    + " WHERE state = ? AND epoch IS NOT NULL"
                    + " ORDER BY stream_index, stream_seq",
                rs -> {
                  rows[0]++;
                  int stream = rs.getInt(1);
                  long seq = rs.getLong(2);
                  long epoch = rs.getLong(3);
                  Long before = highest.get(stream);
                  if (before != null && epoch < before) {
                    report.violation(
                        EPOCH_WENT_BACK,
                        rs.getString(4)
                            + " (stream "
                            + stream
                            + " seq "
                            + seq
                            + ": epoch "
                            + epoch
                            + " after epoch "
                            + before
                            + " at seq "
                            + at.get(stream)
                            + ")");
                  } else {
                    highest.put(stream, epoch);
                    at.put(stream, seq);
                  }
                  return null;
                },
                OutboxRowState.PUBLISHED.dbName()));
    report.total("outbox_rows_epoch_checked", rows[0]);
    report.total(
        "highest_stream_epoch",
        highest.values().stream().mapToLong(Long::longValue).max().orElse(0));
  }
}
