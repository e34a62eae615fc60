package org.rhumbatron.coordinator.shard;

import java.sql.SQLException;
import java.time.Instant;
import java.util.Optional;
import org.rhumbatron.coordinator.outbox.OutboxActor.Appender;
import org.rhumbatron.platform.db.Tx;

/**
 * Timed work of a shard besides publishing, run by its persisted alarm: e.g. the lifecycle's claim
 * expiry ({@code claim.expired}). The coordinator knows no lifecycle tables, so the lifecycle plugs
 * this in.
 */
public interface ShardAlarmWork {
  ShardAlarmWork NONE =
      new ShardAlarmWork() {
        @Override
        public Optional<Instant> nextDue(Tx tx, ResourceShardActor shard) {
          return Optional.empty();
        }

        @Override
        public void runDue(Tx tx, Appender out, ResourceShardActor shard) {}
      };

  /** When {@code shard} next has work, or empty. */
  Optional<Instant> nextDue(Tx tx, ResourceShardActor shard) throws SQLException;

  /** Does what is due now, in the shard's transaction with its Events. */
  void runDue(Tx tx, Appender out, ResourceShardActor shard) throws SQLException;
}
