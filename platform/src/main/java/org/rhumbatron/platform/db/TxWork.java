package org.rhumbatron.platform.db;

import java.sql.SQLException;

/**
 * The body of a transaction.
 *
 * <p><b>It may run more than once.</b> When the database reports a transient error (SQLite busy or
 * locked, a PostgreSQL serialization failure or deadlock) the layer rolls the transaction back and
 * runs the work again. On SQLite it also runs again when another caller's work that shared its
 * group commit failed: the batch is rolled back and rerun with a savepoint per work, so that only
 * the failing one's writes are undone. Database effects roll back with the transaction; anything
 * else the work does (sending a message, changing a field, counting a metric) must be idempotent or
 * happen after the transaction returns.
 */
@FunctionalInterface
public interface TxWork<T> {
  T run(Tx tx) throws SQLException;
}
