package org.rhumbatron.platform.db;

/**
 * Deletes every row of a table past a horizon, in transactions of at most {@code batch} rows each:
 * a purge is never behind, and no single transaction holds SQLite's one writer for long. Between
 * two batches the writers that queued meanwhile commit, since each batch is a write transaction of
 * its own (on SQLite a member of the next group commit).
 */
public final class BatchedPurge {
  private BatchedPurge() {}

  /** What one purge of one table deleted, and in how many transactions. */
  public record Result(String table, long deleted, int batches, int largestBatch) {
    public Result {
      if (deleted < 0 || batches < 0 || largestBatch < 0) {
        throw new IllegalArgumentException(
            "a purge result counts from 0, was " + deleted + "/" + batches + "/" + largestBatch);
      }
    }
  }

  /**
   * Deletes the rows of {@code table} matching {@code where} (bound to {@code args}), oldest first
   * by {@code orderBy}, at most {@code batch} per transaction, until a transaction deletes fewer
   * than {@code batch}. The horizon is in {@code args}, fixed for the whole purge, so rows written
   * meanwhile are inside it and the loop ends.
   */
  public static Result run(
      Database database, String table, String where, String orderBy, int batch, Object... args) {
    return run(database, tx -> null, table, where, orderBy, batch, args);
  }

  /**
   * {@link #run}, with {@code guard} run first in each batch's transaction (a duty's fence: it
   * throws to refuse the batch).
   */
  public static Result run(
      Database database,
      TxWork<?> guard,
      String table,
      String where,
      String orderBy,
      int batch,
      Object... args) {
    String sql = database.dialect().deleteLimited(table, where, orderBy, batch);
    return repeat(
        database,
        table,
        batch,
        tx -> {
          guard.run(tx);
          return tx.update(sql, args);
        });
  }

  /**
   * Runs {@code oneBatch} (deleting at most {@code batch} rows and returning how many) in a
   * transaction of its own, again and again until one deletes fewer than {@code batch}: for purges
   * that a single DELETE cannot say (rows of two tables).
   */
  public static Result repeat(
      Database database, String table, int batch, TxWork<Integer> oneBatch) {
    long deleted = 0;
    int batches = 0;
    int largest = 0;
    while (true) {
      int n = database.inTransaction(oneBatch);
      batches++;
      deleted += n;
      largest = Math.max(largest, n);
      if (n < batch) {
        return new Result(table, deleted, batches, largest);
      }
    }
  }
}
