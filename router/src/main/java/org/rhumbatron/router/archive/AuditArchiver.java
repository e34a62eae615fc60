package org.rhumbatron.router.archive;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.bucket.BucketException;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.DatabaseException;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.router.claims.EventClaims;
import org.rhumbatron.router.run.BatchOutcome;
import org.rhumbatron.router.run.SubscriptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The seed's {@code audit-archiver}: one fetched batch becomes one gzip NDJSON object under its
 * {@link ArchiveKey} in the evidence bucket. A redelivery of the same batch writes the same key
 * with the same bytes. Records whose acks were lost can come back in a batch of another
 * composition, so the archiver also claims each archived Event ({@code processed_events}, after the
 * object is written) and leaves out of a batch the Events an earlier object already holds. A bucket
 * that fails fails the batch, which comes back later; a malformed record is archived, never claimed
 * ({@link ArchiveLines}).
 */
public final class AuditArchiver implements SubscriptionHandler {
  public static final String CONSUMER = Subscription.AUDIT_ARCHIVER.durableName();

  private static final Logger log = LoggerFactory.getLogger(AuditArchiver.class);

  private final Bucket bucket;
  private final ArchiveLines lines;
  private final Database db;
  private final EventClaims claims;

  public AuditArchiver(Bucket bucket, EnvelopeCodec codec, Database db, EventClaims claims) {
    this.bucket = bucket;
    this.lines = new ArchiveLines(codec);
    this.db = db;
    this.claims = claims;
  }

  @Override
  public Subscription subscription() {
    return Subscription.AUDIT_ARCHIVER;
  }

  @Override
  public BatchOutcome handle(int streamIndex, List<EventRecord> records) {
    if (records.isEmpty()) {
      return BatchOutcome.allApplied();
    }
    List<EventRecord> fresh;
    try {
      fresh = notArchivedYet(records);
    } catch (DatabaseException e) {
      return BatchOutcome.failed(records, "cannot read the archiver's claims: " + e.getMessage());
    }
    if (fresh.isEmpty()) {
      return BatchOutcome.allApplied();
    }
    String key = ArchiveKey.of(streamIndex, fresh);
    try {
      bucket.put(key, lines.gzip(fresh));
    } catch (BucketException e) {
      log.warn("audit archive of {} records failed: {}", fresh.size(), e.getMessage());
      return BatchOutcome.failed(
          records, "cannot archive " + fresh.size() + " records to " + key + ": " + e.getMessage());
    }
    List<String> ids =
        fresh.stream().filter(EventRecord::decoded).map(r -> r.event().eventId()).toList();
    try {
      db.inTransaction(tx -> claims.claimEvents(tx, streamIndex, CONSUMER, ids));
    } catch (DatabaseException e) {
      withdraw(key, ids);
      return BatchOutcome.failed(
          records, "archived to " + key + " but cannot record it: " + e.getMessage());
    }
    log.debug("archived {} records of stream {} to {}", fresh.size(), streamIndex, key);
    return BatchOutcome.allApplied();
  }

  /**
   * After the claims of the object under {@code key} failed: the failed batch comes back, perhaps
   * in another composition, so the object goes unless the claims did commit after all. When that
   * cannot be told, the object stays: an Event archived twice rather than never.
   */
  private void withdraw(String key, List<String> ids) {
    try {
      if (!ids.isEmpty() && claims.claimedAmong(db, CONSUMER, ids).size() == ids.size()) {
        return;
      }
      bucket.delete(key);
    } catch (RuntimeException e) {
      log.warn("cannot withdraw archive object {} after its claims failed: {}", key, e.toString());
    }
  }

  /** {@code records} less the decoded Events an earlier object holds, in stream order. */
  private List<EventRecord> notArchivedYet(List<EventRecord> records) {
    List<String> ids =
        records.stream().filter(EventRecord::decoded).map(r -> r.event().eventId()).toList();
    Set<String> archived = ids.isEmpty() ? Set.of() : claims.claimedAmong(db, CONSUMER, ids);
    List<EventRecord> fresh = new ArrayList<>(records.size());
    for (EventRecord r : records) {
      if (!r.decoded() || !archived.contains(r.event().eventId())) {
        fresh.add(r);
      }
    }
    return fresh;
  }
}
