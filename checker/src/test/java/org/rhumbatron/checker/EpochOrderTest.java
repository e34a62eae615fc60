package org.rhumbatron.checker;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.db.Database;

/**
 * The epoch-order check: along a stream, no row was recorded published under an epoch older than
 * one already used. A row behind a later epoch is named; epochs on other streams and a stream that
 * only goes up are not.
 */
class EpochOrderTest {
  @TempDir Path dir;

  @Test
  void aRowPublishedUnderAnOlderEpochAfterANewerOneIsNamed() {
    try (Database db = Database.open(dir.resolve("epochs.db").toString())) {
      // stream 0: epochs 1, 1, 2, then 1 again (a deposed owner); stream 1: 5, 5, 7.
      row(db, "evt_a", 0, 1, 1);
      row(db, "evt_b", 0, 2, 1);
      row(db, "evt_c", 0, 3, 2);
      row(db, "evt_zombie", 0, 4, 1);
      row(db, "evt_d", 0, 5, 2);
      row(db, "evt_e", 1, 1, 5);
      row(db, "evt_f", 1, 2, 5);
      row(db, "evt_g", 1, 3, 7);

      CheckReport report = new CheckReport();
      EpochOrder.check(db, report);

      assertThat(report.ids(EpochOrder.EPOCH_WENT_BACK)).hasSize(1);
      assertThat(report.ids(EpochOrder.EPOCH_WENT_BACK).iterator().next())
          .startsWith("evt_zombie")
          .contains("epoch 1 after epoch 2");
      assertThat(report.totals()).containsEntry("outbox_rows_epoch_checked", 8L);
      assertThat(report.passed()).isFalse();
    }
  }

  @Test
  void epochsThatNeverGoDownPass() {
    try (Database db = Database.open(dir.resolve("epochs.db").toString())) {
      row(db, "evt_a", 2, 1, 3);
      row(db, "evt_b", 2, 2, 3);
      row(db, "evt_c", 2, 3, 4);

      CheckReport report = new CheckReport();
      EpochOrder.check(db, report);

      assertThat(report.count(EpochOrder.EPOCH_WENT_BACK)).isZero();
      assertThat(report.passed()).isTrue();
    }
  }

  private static void row(Database db, String eventId, int stream, long streamSeq, long epoch) {
    db.inTransaction(
        tx ->
            tx.update(
                "INSERT INTO outbox (actor_class, actor_id, project_id, event_id, event_type,"
                    + " stream_index, subject, payload, state, next_attempt_at_ms, created_at_ms,"
                    + " stream_seq, epoch) VALUES ('change', 'c', 'p', ?, 'task.completed', ?,"
                    + " 'x', ?, 'published', 0, 0, ?, ?)",
                eventId,
                stream,
                new byte[] {'{', '}'},
                streamSeq,
                epoch));
  }
}
