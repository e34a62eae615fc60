package org.rhumbatron.router.archive;

import java.util.List;
import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.bucket.BucketException;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.EnvelopeCodec;
import org.rhumbatron.router.run.BatchOutcome;
import org.rhumbatron.router.run.SubscriptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The seed's {@code audit-archiver}: one fetched batch becomes one gzip NDJSON object under its
 * {@link ArchiveKey} in the evidence bucket. It needs no claims: the key and the bytes are fixed by
 * the batch, so a redelivery overwrites the same object with the same content. A bucket that fails
 * fails the batch, which comes back later; a malformed record is archived, not failed ({@link
 * ArchiveLines}).
 */
public final class AuditArchiver implements SubscriptionHandler {
  private static final Logger log = LoggerFactory.getLogger(AuditArchiver.class);

  private final Bucket bucket;
  private final ArchiveLines lines;

  public AuditArchiver(Bucket bucket, EnvelopeCodec codec) {
    this.bucket = bucket;
    this.lines = new ArchiveLines(codec);
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
    String key = ArchiveKey.of(streamIndex, records);
    try {
      bucket.put(key, lines.gzip(records));
    } catch (BucketException e) {
      log.warn("audit archive of {} records failed: {}", records.size(), e.getMessage());
      return BatchOutcome.failed(
          records,
          "cannot archive " + records.size() + " records to " + key + ": " + e.getMessage());
    }
    log.debug("archived {} records of stream {} to {}", records.size(), streamIndex, key);
    return BatchOutcome.allApplied();
  }
}
