package org.rhumbatron.router.archive;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.bucket.BucketObject;
import org.rhumbatron.platform.config.Settings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The seed's object expiry: deletes archive objects (keys under {@code events/}) whose upload is
 * more than {@link Settings#ARCHIVE_EXPIRY} (365 days) before the clock's now. An object exactly
 * that old stays; nothing outside {@code events/} is touched.
 */
public final class ArchiveExpiry {
  private static final Logger log = LoggerFactory.getLogger(ArchiveExpiry.class);

  private final Bucket bucket;
  private final Clock clock;
  private final Duration expiry;

  public ArchiveExpiry(Bucket bucket, Clock clock, Settings settings) {
    this.bucket = bucket;
    this.clock = clock;
    this.expiry = settings.get(Settings.ARCHIVE_EXPIRY);
  }

  /** Deletes the expired archive objects; returns how many it deleted. */
  public int expire() {
    Instant cutoff = clock.instant().minus(expiry);
    int deleted = 0;
    for (BucketObject object : bucket.list(ArchiveKey.PREFIX)) {
      if (object.uploadedAt().isBefore(cutoff) && bucket.delete(object.key())) {
        deleted++;
      }
    }
    if (deleted > 0) {
      log.info("archive expiry deleted {} objects uploaded before {}", deleted, cutoff);
    }
    return deleted;
  }
}
