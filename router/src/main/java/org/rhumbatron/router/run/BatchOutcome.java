package org.rhumbatron.router.run;

import java.util.List;
import org.rhumbatron.platform.eventlog.EventRecord;

/**
 * How a batch went (the seed's "All applied?"): every record applied (fresh or a duplicate), some
 * deferred (the 15-call applyDelta cap: not a failure, they come back with the next delivery), some
 * failed with a reason (counted in {@code k2_batch_failures}; the 5th failure dead-letters them),
 * some waiting for a part of the platform that was out of reach ({@link Unavailable}: not counted,
 * they come back after the nack delay), or some malformed (they never decode, so they are
 * dead-lettered at once, each naming its decode error).
 *
 * @param deferred records whose claims were given back without a failure
 * @param failed records that could not be applied (an effect that failed or threw)
 * @param error why the failed records failed, or null when none failed
 * @param waiting records not applied because NATS or the database was out of reach
 * @param unavailable what was out of reach, or null when no record waits
 * @param malformed records that did not decode and that the handler could not handle without their
 *     Event ({@link EventRecord#decodeError})
 */
public record BatchOutcome(
    List<EventRecord> deferred,
    List<EventRecord> failed,
    String error,
    List<EventRecord> waiting,
    String unavailable,
    List<EventRecord> malformed) {

  private static final BatchOutcome ALL_APPLIED = new BatchOutcome(List.of(), List.of(), null);

  public BatchOutcome {
    deferred = List.copyOf(deferred);
    failed = List.copyOf(failed);
    waiting = List.copyOf(waiting);
    malformed = List.copyOf(malformed);
    if (malformed.stream().anyMatch(EventRecord::decoded)) {
      throw new IllegalArgumentException("a malformed record of a batch outcome must not decode");
    }
    if (!failed.isEmpty() && (error == null || error.isBlank())) {
      throw new IllegalArgumentException("a batch outcome with failed records needs an error");
    }
    if (!waiting.isEmpty() && (unavailable == null || unavailable.isBlank())) {
      throw new IllegalArgumentException("a batch outcome with waiting records needs a reason");
    }
  }

  public BatchOutcome(List<EventRecord> deferred, List<EventRecord> failed, String error) {
    this(deferred, failed, error, List.of(), null, List.of());
  }

  public static BatchOutcome allApplied() {
    return ALL_APPLIED;
  }

  public static BatchOutcome failed(List<EventRecord> failed, String error) {
    return new BatchOutcome(List.of(), failed, error);
  }

  /** {@code records} wait for {@code unavailable}, a part of the platform out of reach. */
  public static BatchOutcome waiting(List<EventRecord> records, String unavailable) {
    return new BatchOutcome(List.of(), List.of(), null, records, unavailable, List.of());
  }

  public boolean allRecordsApplied() {
    return deferred.isEmpty() && failed.isEmpty() && waiting.isEmpty() && malformed.isEmpty();
  }
}
