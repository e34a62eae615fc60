package org.rhumbatron.router.archive;

import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.bucket.NatsObjectStoreBucket;
import org.rhumbatron.router.EventLogFixture;
import org.rhumbatron.testkit.SettableClock;

class NatsAuditArchiveTest extends AuditArchiveContract {
  @Override
  Bucket open(EventLogFixture log, SettableClock clock) {
    return NatsObjectStoreBucket.open(log.connection(), Bucket.EVIDENCE, clock);
  }

  @Override
  void breakBucket() throws Exception {
    log.connection().objectStoreManagement().delete(Bucket.EVIDENCE);
  }
}
