package org.rhumbatron.router.run;

import java.util.List;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;

/**
 * What one subscription does with one fetched batch of a stream. The handler claims and applies
 * (claim and effect in one transaction, see {@code EventClaims}) and says how it went; it never
 * acks or nacks: {@link SubscriptionRun} does that, and counts failed batches.
 */
public interface SubscriptionHandler {

  Subscription subscription();

  /**
   * Handles {@code records} (in stream order; a record that did not decode has {@code decoded() ==
   * false}: it is reported malformed, unless the handler can do its work without the Event, as the
   * archiver keeps the bytes). Claims of events that are not applied must be released (or rolled
   * back) before this returns, so the redelivery applies them.
   */
  BatchOutcome handle(int streamIndex, List<EventRecord> records);
}
