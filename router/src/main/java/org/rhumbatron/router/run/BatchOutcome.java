package org.rhumbatron.router.run;

import java.util.List;
import org.rhumbatron.platform.eventlog.EventRecord;

/**
 * How a batch went (the seed's "All applied?"): every record applied (fresh or a duplicate), some
 * deferred (the 15-call applyDelta cap: not a failure, they come back with the next delivery), or
 * some failed with a reason (counted in {@code k2_batch_failures}; the 5th failure dead-letters
 * them).
 *
 * @param deferred records whose claims were given back without a failure
 * @param failed records that could not be applied (a malformed envelope, an effect that threw)
 * @param error why the failed records failed, or null when none failed
 */
public record BatchOutcome(List<EventRecord> deferred, List<EventRecord> failed, String error) {

  private static final BatchOutcome ALL_APPLIED = new BatchOutcome(List.of(), List.of(), null);

  public BatchOutcome {
    deferred = List.copyOf(deferred);
    failed = List.copyOf(failed);
    if (!failed.isEmpty() && (error == null || error.isBlank())) {
      throw new IllegalArgumentException("a batch outcome with failed records needs an error");
    }
  }

  public static BatchOutcome allApplied() {
    return ALL_APPLIED;
  }

  public static BatchOutcome failed(List<EventRecord> failed, String error) {
    return new BatchOutcome(List.of(), failed, error);
  }

  public boolean allRecordsApplied() {
    return deferred.isEmpty() && failed.isEmpty();
  }
}
