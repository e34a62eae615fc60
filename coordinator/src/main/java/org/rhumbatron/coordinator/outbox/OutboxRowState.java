package org.rhumbatron.coordinator.outbox;

/**
 * The states of an outbox row, exactly the seed's diagram ("Outbox row states"):
 *
 * <pre>
 * pending -> published    stream publish succeeded
 * pending -> retry_wait   send failed
 * retry_wait -> pending   backoff 1 s, 2 s, 4 s ... max 5 min
 * retry_wait -> failed    10th failed attempt
 * pending -> failed       no producer binding for the stream
 * </pre>
 */
public enum OutboxRowState {
  PENDING("pending"),
  RETRY_WAIT("retry_wait"),
  PUBLISHED("published"),
  FAILED("failed");

  /**
   * The waiting rows' predicate, spelled as the partial indexes on {@code outbox} spell theirs: a
   * bound state would keep the planner from using them.
   */
  public static final String WAITING_SQL =
      "state IN ('" + PENDING.dbName + "', '" + RETRY_WAIT.dbName + "')";

  private final String dbName;

  OutboxRowState(String dbName) {
    this.dbName = dbName;
  }

  /** The value stored in {@code outbox.state}. */
  public String dbName() {
    return dbName;
  }

  /**
   * {@code state = '<this state>'} with a literal, for predicates that a partial index must match.
   */
  public String condition() {
    return "state = '" + dbName + "'";
  }

  public static OutboxRowState fromDb(String value) {
    for (OutboxRowState s : values()) {
      if (s.dbName.equals(value)) {
        return s;
      }
    }
    throw new IllegalArgumentException("unknown outbox state '" + value + "'");
  }
}
